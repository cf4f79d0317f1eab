"""The agent side of A2A: write an agent, serve it.

Sits on ``parley.protocol``, ``parley.types`` and ``parley.stores``. ``RequestHandler``
holds every operation's behaviour, transport-agnostic; the bindings in
``parley.server.bindings`` only decode and encode; ``create_app`` assembles the ASGI app.
Agents are written against ``AgentExecutor`` + ``TaskUpdater``, or as one function with
``@agent``.
"""

from parley.server._agent import (
    AgentExecutor,
    CancelRefusingAgent,
    EventSink,
    TaskUpdater,
    text_message,
)
from parley.server._app import A2AApp, create_app
from parley.server._card import CardError
from parley.server._context import CallContext, RequestContext
from parley.server._events import EventLog
from parley.server._gc import tune_gc
from parley.server._grpc_options import GRPCOptions
from parley.server._handler import EventStream, RequestHandler
from parley.server._ids import new_id
from parley.server._keys import SigningKey, SigningKeys
from parley.server._recovery import ResumableAgent
from parley.server._retention import Retention
from parley.server._simple import (
    AgentContext,
    AuthRequired,
    FunctionAgent,
    InputRequired,
    Rejected,
    agent,
)

__all__ = [
    "A2AApp",
    "AgentContext",
    "AgentExecutor",
    "AuthRequired",
    "CallContext",
    "CancelRefusingAgent",
    "CardError",
    "EventLog",
    "EventSink",
    "EventStream",
    "FunctionAgent",
    "GRPCOptions",
    "InputRequired",
    "Rejected",
    "RequestContext",
    "RequestHandler",
    "ResumableAgent",
    "Retention",
    "SigningKey",
    "SigningKeys",
    "TaskUpdater",
    "agent",
    "create_app",
    "new_id",
    "text_message",
    "tune_gc",
]
