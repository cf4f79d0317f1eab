"""The HTTP+JSON (REST) transport (spec 3.2.3, 3.5.6; v1.0.1 §11): one transport, and the
shapes of each version as a ``RESTWire`` it is given (chosen once, by the factory).

v0.3's requests and results go through the same protobuf converters as the server's binding
(``parley.protocol.protobuf``). ``TaskSubscription`` is a ``GET``, as the normative
proto's HTTP annotation and the official SDK have it (parley's server takes ``POST``
too). Errors come back as the HTTP status and a JSON body; a body with ``code`` (parley,
and JSON-RPC-shaped servers) gives the exact class, a body with only ``message`` (the
official SDK) the class the status suggests for the operation called (``_class_for_status``);
any other answer is ``NotAnAgentError`` naming the status.

The path of ``GetTaskPushNotificationConfig`` needs a config id; without one the task's
id is asked for, as in the gRPC resource name (``push_config_id``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any, Protocol
from urllib.parse import quote

import httpx
import httpx_sse
from pydantic import ValidationError

from parley.client._results import decode_result_json
from parley.client._transport import ClientCallContext, StreamItem, Timeouts
from parley.client.transports._dialect import from_error_details, v1_dialect
from parley.client.transports._http import (
    HTTPBinding,
    StreamPosition,
    empty_answer,
    http_headers,
    http_timeout,
    is_event_stream,
    not_an_agent,
    refused,
    translated,
)
from parley.protocol import (
    ERROR_CLASSES,
    A2AError,
    AuthenticatedExtendedCardNotConfiguredError,
    InternalError,
    InvalidAgentResponseError,
    InvalidParamsError,
    Operation,
    PushNotificationNotSupportedError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from parley.protocol._versions import V0_3, V1_0
from parley.protocol.protobuf import PROTO_OPERATIONS, ConversionError, from_json, to_json
from parley.protocol.protobuf._core import push_config_id
from parley.types import A2AModel

_EVENT_KEYS = frozenset({"task", "message", "statusUpdate", "artifactUpdate"})


class RESTTransport(HTTPBinding):
    """Talks HTTP+JSON to the agent whose REST base URL is ``url``, in the shapes of one
    version (``wire``: v0.3's by default).

    ``http_client``: an ``httpx.AsyncClient`` to share; without one the transport makes
    its own and closes it in ``aclose``.
    """

    def __init__(
        self,
        url: str,
        http_client: httpx.AsyncClient | None = None,
        *,
        timeouts: Timeouts | None = None,
        wire: RESTWire | None = None,
        **options: Any,
    ) -> None:
        super().__init__(url.rstrip("/"), http_client, timeouts)
        self.wire = wire or V0_3_WIRE
        self.protocol = self.wire.protocol
        """The A2A version this transport speaks."""

    async def request(
        self, operation: Operation, params: A2AModel | None, context: ClientCallContext
    ) -> Any:
        call = self._call(operation, params, context)
        with translated(self.url):
            response = await self.http.request(**call)
        if response.status_code >= 300:
            raise self.wire.error(operation, response, response.content)
        if empty_answer(operation, response, response.content):
            return None
        return self.wire.result(operation, params, response, response.content)

    async def stream(
        self, operation: Operation, params: A2AModel | None, context: ClientCallContext
    ) -> AsyncIterator[StreamItem]:
        call = self._call(operation, params, context)
        position = StreamPosition(last_event_id=context.last_event_id)
        with translated(self.url, position):
            async with httpx_sse.aconnect_sse(self.http, **call) as source:
                response = source.response
                if response.status_code >= 300 or not is_event_stream(response):
                    raise self.wire.error(operation, response, await response.aread())
                position.started = True
                async for sse in source.aiter_sse():
                    event = self.wire.event(operation, params, response, sse)
                    yield StreamItem(event, position.delivered(sse.id))

    def _call(
        self, operation: Operation, params: A2AModel | None, context: ClientCallContext
    ) -> dict[str, Any]:
        method, path, query, body, headers = self.wire.call(operation, params, context)
        return {
            "method": method,
            "url": self.url + path,
            "content": body,
            "params": query,
            "headers": {**http_headers(context, stream=operation.streaming), **headers},
            "timeout": http_timeout(self.timeouts, operation),
        }


Call = tuple[str, str, dict[str, str], bytes | None, dict[str, str]]
"""An operation's HTTP method, path, query, body and the headers the version adds."""


class RESTWire(Protocol):
    """What one A2A version says about HTTP+JSON, for the client: the request of each
    operation, and how its answers, stream events and errors read."""

    protocol: str

    def call(
        self, operation: Operation, params: A2AModel | None, context: ClientCallContext
    ) -> Call: ...

    def result(
        self, operation: Operation, params: A2AModel | None, response: httpx.Response, body: bytes
    ) -> Any: ...

    def event(
        self,
        operation: Operation,
        params: A2AModel | None,
        response: httpx.Response,
        sse: httpx_sse.ServerSentEvent,
    ) -> Any: ...

    def error(self, operation: Operation, response: httpx.Response, body: bytes) -> A2AError: ...


class _V03Wire:
    """v0.3's HTTP+JSON: the operation table's ``/v1/...`` paths, proto-JSON bodies, errors
    as ``{code, message, data}``."""

    protocol = V0_3

    def call(
        self, operation: Operation, params: A2AModel | None, context: ClientCallContext
    ) -> Call:
        path = operation.rest_path
        task_id = getattr(params, "id", None) or getattr(params, "task_id", None)
        if task_id is not None:
            config_id = push_config_id(
                task_id, getattr(params, "push_notification_config_id", None)
            )
            path = path.replace("{id}", quote(task_id, safe=""))
            path = path.replace("{config_id}", quote(config_id, safe=""))
        query: dict[str, str] = {}
        history_length = getattr(params, "history_length", None)
        if operation.rest_method == "GET" and history_length is not None:
            query["historyLength"] = str(history_length)
        query.update(context.query)
        if operation.name == "resubscribe":
            return "GET", path, query, None, {}
        body = None
        if operation.rest_method == "POST":
            body = to_json(PROTO_OPERATIONS[operation.name].params_to_proto(params))
        return operation.rest_method, path, query, body, {}

    def result(
        self, operation: Operation, params: A2AModel | None, response: httpx.Response, body: bytes
    ) -> Any:
        return _result(operation, response, body)

    def event(
        self,
        operation: Operation,
        params: A2AModel | None,
        response: httpx.Response,
        sse: httpx_sse.ServerSentEvent,
    ) -> Any:
        return _event(operation, response, sse.data)

    def error(self, operation: Operation, response: httpx.Response, body: bytes) -> A2AError:
        return _error(operation, response, body)


class _V10Wire:
    """v1.0's HTTP+JSON (v1.0.1 §11): paths without ``/v1`` (``/message:send``,
    ``/tasks/{id}``), under ``/{tenant}`` when there is one, ProtoJSON bodies, GET
    parameters in the query, ``A2A-Version: 1.0``, and ``google.rpc.Status`` errors."""

    protocol = V1_0

    def __init__(self, tenant: str | None = None) -> None:
        self.dialect = v1_dialect(tenant)

    def call(
        self, operation: Operation, params: A2AModel | None, context: ClientCallContext
    ) -> Call:
        v1_operation = self.dialect.operation(operation)
        request = self.dialect.request(operation, params)
        path = v1_operation.rest_path
        tenant = request.pop("tenant", None)
        if tenant:  # v1.0.1 §11: /{tenant}/message:send, ...
            path = f"/{quote(tenant, safe='')}{path}"
        for placeholder, field in v1_operation.path_fields:
            value = quote(str(request.pop(field, "")), safe="")
            path = path.replace(f"{{{placeholder}}}", value)
        query = {**context.query}
        body = None
        if v1_operation.rest_method == "POST":
            body = json.dumps(request, separators=(",", ":"), ensure_ascii=False).encode()
        else:
            query.update({key: _query_value(value) for key, value in request.items()})
        return v1_operation.rest_method, path, query, body, {"A2A-Version": self.protocol}

    def result(
        self, operation: Operation, params: A2AModel | None, response: httpx.Response, body: bytes
    ) -> Any:
        return self.dialect.result(operation, params, _json(response, body))

    def event(
        self,
        operation: Operation,
        params: A2AModel | None,
        response: httpx.Response,
        sse: httpx_sse.ServerSentEvent,
    ) -> Any:
        payload = _json(response, sse.data)
        if sse.event == "error" or (isinstance(payload, dict) and "error" in payload):
            raise _v1_error(operation, response, sse.data.encode())
        return self.dialect.result(operation, params, payload)

    def error(self, operation: Operation, response: httpx.Response, body: bytes) -> A2AError:
        return _v1_error(operation, response, body)


V0_3_WIRE: RESTWire = _V03Wire()
_WIRES: dict[str, type[_V10Wire]] = {V1_0: _V10Wire}


def create_rest_transport(
    url: str, http_client: httpx.AsyncClient | None = None, **options: Any
) -> RESTTransport:
    """The registered factory of the ``HTTP+JSON`` transport (``protocol``: the version
    whose paths and shapes it speaks, v0.3's by default; ``tenant``: v1.0's tenant)."""
    wire_class = _WIRES.get(options.get("protocol") or "")
    wire = V0_3_WIRE if wire_class is None else wire_class(options.get("tenant"))
    return RESTTransport(url, http_client, wire=wire, **options)


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _json(response: httpx.Response, body: bytes | str) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        raise not_an_agent(response, "an A2A HTTP+JSON answer") from None


def _v1_error(operation: Operation, response: httpx.Response, body: bytes) -> A2AError:
    """A v1.0 error body (``{"error": {code, status, message, details}}``) as its class;
    a v0.3-style body or a bare status as ``_error`` reads them."""
    try:
        payload = json.loads(body)
    except ValueError:
        payload = None
    status = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(status, dict):
        message = status.get("message") if isinstance(status.get("message"), str) else None
        found = from_error_details(status.get("details"), message)
        if found is not None:
            return found
        refused(response)
        return _class_for_status(operation, response.status_code)(message)
    return _error(operation, response, body)


def _result(operation: Operation, response: httpx.Response, body: bytes) -> Any:
    if operation.name == "get_extended_card":
        try:  # the official SDK serves the card in its JSON-schema form
            return decode_result_json(operation, body)
        except InvalidAgentResponseError:
            pass  # a server that answers in proto-JSON, as the rest of the binding does
    proto_op = PROTO_OPERATIONS[operation.name]
    try:
        return proto_op.result_from_proto(from_json(body, proto_op.response))
    except (ConversionError, ValidationError) as error:
        if not _is_json(body):
            raise not_an_agent(response, "an A2A HTTP+JSON answer") from None
        raise InvalidAgentResponseError(
            f"The agent's answer to {operation.rest_method} {operation.rest_path} "
            f"is not valid: {error}"
        ) from None


def _event(operation: Operation, response: httpx.Response, data: str) -> Any:
    try:
        payload = json.loads(data)
    except ValueError:
        raise not_an_agent(response, "JSON events") from None
    if isinstance(payload, dict) and "code" in payload and not _EVENT_KEYS & payload.keys():
        raise _from_body(operation, payload, response.status_code)
    return _result(operation, response, data.encode())


def _error(operation: Operation, response: httpx.Response, body: bytes) -> A2AError:
    try:
        payload = json.loads(body)
    except ValueError:
        payload = None
    if isinstance(payload, dict) and isinstance(payload.get("code"), int):
        return _from_body(operation, payload, response.status_code)
    refused(response)
    if not isinstance(payload, dict) or not isinstance(payload.get("message"), str):
        if operation.name == "get_extended_card" and response.status_code == 404:
            # Spec 7.10: the endpoint exists only when the card offers an extended card.
            return AuthenticatedExtendedCardNotConfiguredError(
                f"{response.request.url} answered HTTP 404: the agent has no extended card"
            )
        return not_an_agent(response, "an A2A HTTP+JSON answer")
    return _from_body(operation, payload, response.status_code)


def _from_body(operation: Operation, payload: dict[str, Any], status: int) -> A2AError:
    message = payload.get("message")
    text = message if isinstance(message, str) else None
    code = payload.get("code")
    if isinstance(code, int):
        return A2AError.from_code(code, text, payload.get("data"))
    return _class_for_status(operation, status)(text)


def _class_for_status(operation: Operation, status: int) -> type[A2AError]:
    """The error class an HTTP status suggests for ``operation`` (a server sent no code).

    Spec 3.2.3 asks for the status that corresponds to the A2A error; v0.3.0 has no
    table, so the statuses in use are read by what they mean: 404 is the missing thing
    the path names, 400/422 bad params, 501 (Not Implemented) an unsupported operation.
    """
    if status == 404:
        if operation.name == "get_extended_card":
            return AuthenticatedExtendedCardNotConfiguredError
        return TaskNotFoundError
    if status in (400, 422):
        return InvalidParamsError
    if status == 501:
        if operation.name.endswith(("push_config", "push_configs")):
            return PushNotificationNotSupportedError
        return UnsupportedOperationError
    matching = [error for error in ERROR_CLASSES if error.http_status == status]
    return matching[0] if matching else InternalError


def _is_json(body: bytes) -> bool:
    try:
        json.loads(body)
    except ValueError:
        return False
    return True
