"""Dialects: each JSON-RPC protocol parley speaks, as data beside the operation table.

A dialect is a table from its method names to core operations (``OPERATIONS``), each
with the functions that decode the method's ``params`` into the core params model and
encode the core result (or each stream event) in the dialect's own shapes, plus the
function that writes a core error as the dialect's ``error`` member. The JSON-RPC
binding runs these around the one request handler, which never learns which dialect a
request came in. v0.3 (``V0_3``) takes its names from ``_v0_3`` and the core's own shapes;
which dialect a request speaks is decided in ``_dialects``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from parley._speedups import encode_task
from parley.protocol._errors import A2AError, InvalidParamsError
from parley.protocol._operations import OPERATIONS, Operation
from parley.protocol._v0_3 import V0_3_NAMES
from parley.types import Task

TaskLookup = Callable[[str], Awaitable[Task | None]]
"""The task with an id as the handler serves it now, ``None`` when there is none."""


@dataclass(frozen=True, slots=True)
class DialectMethod:
    """One JSON-RPC method of a dialect, and how it maps onto a core operation."""

    operation: Operation
    decode: Callable[[Any], Any]
    """The request's ``params`` member (parsed JSON, ``None`` when absent) -> the core
    params of ``operation``. Raises ``InvalidParamsError`` naming what is wrong."""
    encode: Callable[[Any, Any], bytes]
    """``encode(result, params)``: a result of ``operation`` (and the decoded params it
    answers) -> the JSON of the ``result`` member."""
    stream_encoder: Callable[[Any, Any], Callable[[Any], bytes]] | None = None
    """Streaming methods: ``stream_encoder(params, checked)`` makes the encoder of one
    stream's events (it may keep state across them; ``checked`` is what ``check``
    returned); ``None``: ``encode`` each event."""
    check: Callable[[Any, TaskLookup], Awaitable[Any]] | None = None
    """Runs before the operation with the request's raw ``params`` and a way to look a
    task up; raises the dialect's error to refuse the request, or returns what the
    stream encoder should know (the task as it was)."""


@dataclass(frozen=True, slots=True)
class Dialect:
    """The JSON-RPC method names, shapes and error codes of one protocol."""

    name: str
    """The protocol id: ``"0.3"``, ``"1.0"``, ``"2025-early"``."""
    methods: Mapping[str, DialectMethod]
    encode_error: Callable[[A2AError], bytes]
    """A core error -> the JSON of the ``error`` member."""
    versions: tuple[str, ...] = ()
    """``A2A-Version`` values (``Major.Minor``) that select this dialect."""
    claims: Callable[[Any], bool] | None = None
    """For a method name another dialect has too: whether a request's ``params`` (parsed
    JSON) are this dialect's. ``None``: it never claims a shared name."""
    hint: bytes = b""
    """Bytes found in every request body ``claims`` accepts, so that the binding can
    pass a request that lacks them without parsing it twice."""
    tenant_of: Callable[[Any], str | None] | None = None
    """The tenant a request's ``params`` (parsed JSON) name, which scopes the call;
    raises ``InvalidParamsError`` for one that is not a string. ``None``: the dialect
    has no tenants."""
    protocol_version: str = "0.3"
    """The A2A version a call in this dialect speaks (what push notifications and the
    version's rules follow): 2025-early's calls are served as v0.3's."""


def encode_result(result: Any, params: Any = None) -> bytes:
    """A core result as v0.3 JSON: a model, a list of models, or ``null``."""
    if result is None:
        return b"null"
    if isinstance(result, list):
        return b"[%s]" % b",".join(item.to_json() for item in result)
    if type(result) is Task:
        return encode_task(result, "0.3") or result.to_json()
    data: bytes = result.to_json()
    return data


def validated(operation: Operation, what: str) -> Callable[[Any], Any]:
    """The decoder of a method whose params are the operation's own params model."""
    model = operation.params

    def decode(params: Any) -> Any:
        if model is None:
            if params is not None and not isinstance(params, dict):
                raise InvalidParamsError(f"{what} takes no params object")
            return None
        if params is None:
            raise InvalidParamsError(f"{what} needs a params object")
        try:
            return model.model_validate(params)
        except ValidationError as error:
            raise InvalidParamsError.from_validation(what, error) from None

    return decode


V0_3 = Dialect(
    name="0.3",
    methods={
        V0_3_NAMES[op.name].jsonrpc_method: DialectMethod(
            op, validated(op, V0_3_NAMES[op.name].jsonrpc_method), encode_result
        )
        for op in OPERATIONS
    },
    encode_error=A2AError.body,
    versions=("0.3",),
)
"""A2A v0.3.0: the method names of v0.3's table (``_v0_3``) and the wire types of
``parley.types``. The JSON-RPC binding decodes it straight from bytes; these functions
serve its slow path."""
