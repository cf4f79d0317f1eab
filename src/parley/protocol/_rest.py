"""REST dialects: each version of the HTTP+JSON binding, as data beside the operation table.

A REST dialect is what one A2A version says about HTTP+JSON: its routes (verb and path
template of each operation, with the functions that read a request into the core params
and write a result, or each streamed event, as the body), the error body and the HTTP
status an error is answered with, and the media type of its answers. The HTTP+JSON
binding serves every dialect with the one request handler and never asks which version
it serves; v0.3's dialect is in ``parley.protocol.protobuf``, v1.0's in
``parley.protocol.v1``, and which one a request speaks is decided in ``_rest_dialects``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic_core import from_json

from parley.protocol._errors import A2AError, InvalidParamsError, JSONParseError
from parley.protocol._operations import Operation


@dataclass(frozen=True, slots=True)
class RESTRoute:
    """One operation at one verb and path of a REST dialect."""

    operation: Operation
    method: str
    path: str
    """Path template; ``{id}`` is the task id, ``{config_id}`` a push config id."""
    decode: Callable[[dict[str, str], str, bytes], tuple[Any, str | None]]
    """``decode(path_params, query_string, body)`` -> the core params of ``operation``
    (a model, or ``None``) and the tenant the request names (``None``: none). Raises an
    ``A2AError``, ``ConversionError`` or ``ValidationError`` for what does not fit."""
    encode: Callable[[Any], bytes]
    """A result of ``operation`` (for streams: one event) -> the JSON the dialect sends."""


@dataclass(frozen=True, slots=True)
class RESTDialect:
    """The HTTP+JSON routes, shapes, error body and statuses of one A2A version."""

    version: str
    """The A2A version (``Major.Minor``) the dialect speaks, which its calls are served as."""
    routes: tuple[RESTRoute, ...]
    encode_error: Callable[[A2AError], bytes]
    """An error -> the body it is answered with (also a stream's last event)."""
    status: Callable[[A2AError], int]
    """The HTTP status an error is answered with."""
    media_type: bytes
    """The ``Content-Type`` of answers other than streams."""
    prefix: str = ""
    """What every path of the dialect starts with (v0.3's ``/v1/``): without an
    ``A2A-Version``, a path under a dialect's prefix is that dialect's."""
    tenant_paths: bool = False
    """Every route is served under ``/{tenant}`` too (the tenant of the call)."""
    error_event: bytes | None = None
    """The SSE ``event:`` name of an error that ends a started stream (``None``: none)."""
    label: str = "A2A"
    """How the dialect is named in a "no operation at ..." message."""


def read_json(body: bytes) -> Any:
    """A request body parsed as JSON (``pydantic_core.from_json``: on bytes, several times
    faster than ``json.loads``, which detects the encoding in Python first). Raises
    ``JSONParseError`` for what is not JSON, ``InvalidParamsError`` for JSON nested deeper
    than the parser goes (the request is well-formed, its content is not acceptable)."""
    try:
        return from_json(body)
    except ValueError as error:
        if str(error).startswith("recursion limit exceeded"):
            raise InvalidParamsError.too_deep() from None
        raise JSONParseError.from_decode(error) from None
