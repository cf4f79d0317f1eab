"""The JSON-RPC binding's entry (``parley.server.bindings._jsonrpc``): a request read
from its bytes in one validation, straight into its method's params model, or ``None``.

Two kinds of request are read so: a v0.3 request of any v0.3 method (into a dict of its
members, each member a ``TypedDict`` of its model's fields, so no envelope model is made
to be read once and dropped), and a v1.0 ``SendMessage`` or ``SendStreamingMessage`` in
its plain form (ProtoJSON read by a validator compiled from the core's params schema).
The plain way beside it is the binding's ``_answer``: the body parsed into JSON, its
dialect recognised, its params decoded by the dialect's method table.
"""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any, NotRequired, Union, get_args

from pydantic import Field, TypeAdapter, ValidationError
from pydantic_core import SchemaValidator, core_schema
from typing_extensions import TypedDict  # pydantic's own dependency; typing's only from 3.12

from parley._speedups import _switch
from parley.protocol import BY_JSONRPC_METHOD, SHARED_METHODS, Operation
from parley.protocol._dialects import CLAIM_HINTS
from parley.types import A2ARequest

__all__ = ["read_request"]

Read = tuple[Any, Operation, Any]
"""A request's id, its core operation and its params (the operation's params model)."""


def read_request(body: bytes, version: str | None) -> Read | None:
    """``body``'s id, operation and params, read from its bytes: a v0.3 request
    (``version``, its ``A2A-Version``, none, empty or ``0.3``), or a v1.0 send in its
    plain form (``1.0``). ``None``: the seam is off, or the request is not one of these
    (another version or method, a form this does not read, invalid): the binding reads
    it the plain way, which also works out the error an invalid one deserves."""
    if not _switch.on:
        return None
    if not version or version == "0.3":
        return _read_v0_3(body, version)
    if version == "1.0":
        return _read_v1_send(body)
    return None


def _request_reader() -> Any:
    """A validator reading a request of ``A2ARequest`` into a dict of its members (the
    params as their model), told apart by ``method`` as the union tells its models apart."""
    members: list[Any] = []
    for model in get_args(get_args(A2ARequest)[0]):
        fields = {name: field.annotation for name, field in model.model_fields.items()}
        if not model.model_fields["params"].is_required():
            fields["params"] = NotRequired[fields["params"]]
        members.append(TypedDict(f"_{model.__name__}", fields))  # type: ignore[operator]
    union: Any = Annotated[Union[tuple(members)], Field(discriminator="method")]  # noqa: UP007
    return TypeAdapter[Any](union).validator  # without the adapter's Python steps


_REQUEST = _request_reader()


def _read_v0_3(body: bytes, version: str | None) -> Read | None:
    try:
        request = _REQUEST.validate_json(body)
    except ValidationError:
        return None
    method = request["method"]
    if not version and method in SHARED_METHODS and any(hint in body for hint in CLAIM_HINTS):
        return None  # another dialect may claim it: the binding recognises it
    return request["id"], BY_JSONRPC_METHOD[method], request.get("params")


SEND_METHODS = ("SendMessage", "SendStreamingMessage")


@cache
def _v1_send() -> tuple[SchemaValidator, dict[str, Operation]]:
    """v1.0's reader of a plain send request, and the core operation of each send method
    (built on first use: v1.0 is read only where it is served)."""
    from parley.protocol.v1 import BY_V1_JSONRPC_METHOD
    from parley.protocol.v1._protojson import plain_send_params

    request_id = core_schema.nullable_schema(
        core_schema.union_schema(
            [core_schema.str_schema(strict=True), core_schema.int_schema(strict=True)]
        )
    )
    reader = SchemaValidator(
        core_schema.typed_dict_schema(
            {
                "jsonrpc": core_schema.typed_dict_field(core_schema.literal_schema(["2.0"])),
                "id": core_schema.typed_dict_field(request_id),
                "method": core_schema.typed_dict_field(
                    core_schema.literal_schema(list(SEND_METHODS))
                ),
                "params": core_schema.typed_dict_field(plain_send_params(alone=True)),
            }
        ),
        _use_prebuilt=False,  # as for the writers: the copy, not the core classes' own
    )
    return reader, {name: BY_V1_JSONRPC_METHOD[name].core for name in SEND_METHODS}


def _read_v1_send(body: bytes) -> Read | None:
    """A v1.0 JSON-RPC ``SendMessage`` or ``SendStreamingMessage`` request in its plain
    form. Params with a field ``MessageSendParams`` does not have, such as the ``tenant``
    that goes into the call, are refused as the params are read (rather than looked for
    in the body first, by every request), and read by the plain way."""
    reader, sends = _v1_send()
    try:
        request = reader.validate_json(body)
    except ValidationError:
        return None
    return request["id"], sends[request["method"]], request["params"]
