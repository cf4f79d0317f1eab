"""The agent side of A2A: write an agent, serve it.

Sits on ``parley.protocol``, ``parley.types`` and ``parley.stores``, and on
``parley._jwks``, the one fetch-and-cache of a JWKS (the client's ``AgentKeys`` is it
too), for the keys of JWT bearer tokens. ``RequestHandler``
holds every operation's behaviour, transport-agnostic; the bindings in
``parley.server.bindings`` only decode and encode; ``create_app`` assembles the ASGI app.
Agents are written against ``AgentExecutor`` + ``TaskUpdater``, or as one function with
``@agent``.
"""

from typing import Any

from parley._extras import require

require("server", "parley.server")

from parley.server._app import A2AApp, create_app
from parley.server._card import TrustedProxies
from parley.server._gc import tune_gc
from parley.server.agent._agent import (
    AgentExecutor,
    CancelRefusingAgent,
    EventSink,
    ResumableAgent,
    TaskUpdater,
    text_message,
)
from parley.server.agent._card_error import CardError
from parley.server.agent._context import CallContext, Principal, RequestContext
from parley.server.agent._ids import new_id
from parley.server.agent._simple import (
    AgentContext,
    AuthRequired,
    FunctionAgent,
    InputRequired,
    Rejected,
    agent,
)
from parley.server.auth._auth import Authenticator, Credentials, MissingCredentials, SchemeVerifier
from parley.server.auth._jwt import JWTVerifier
from parley.server.auth._keys import SigningKey, SigningKeys
from parley.server.auth._verifiers import (
    APIKeyVerifier,
    BasicVerifier,
    ClientCertificateVerifier,
    TokenVerifier,
)
from parley.server.bindings._grpc_options import GRPCOptions
from parley.server.tasks._bus import Bus, RedisBus
from parley.server.tasks._events import EventLog
from parley.server.tasks._handler import EventStream, RequestHandler
from parley.server.tasks._retention import Retention

__all__ = [
    "A2AApp",
    "APIKeyVerifier",
    "AgentContext",
    "AgentExecutor",
    "AuthRequired",
    "Authenticator",
    "BasicVerifier",
    "Bus",
    "CallContext",
    "CancelRefusingAgent",
    "CardError",
    "ClientCertificateVerifier",
    "Credentials",
    "EventLog",
    "EventSink",
    "EventStream",
    "FunctionAgent",
    "GRPCOptions",
    "InputRequired",
    "JWTVerifier",
    "MissingCredentials",
    "Principal",
    "RedisBus",
    "Rejected",
    "RequestContext",
    "RequestHandler",
    "ResumableAgent",
    "Retention",
    "SchemeVerifier",
    "SigningKey",
    "SigningKeys",
    "TLSHTTPProtocol",
    "TaskUpdater",
    "TokenVerifier",
    "TrustedProxies",
    "agent",
    "create_app",
    "new_id",
    "text_message",
    "tune_gc",
]


def __getattr__(name: str) -> Any:
    if name == "TLSHTTPProtocol":  # imports uvicorn's httptools protocol
        from parley.server.auth._tls import TLSHTTPProtocol

        return TLSHTTPProtocol
    raise AttributeError(f"module 'parley.server' has no attribute {name!r}")
