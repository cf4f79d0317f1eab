"""JSON-RPC 2.0 envelopes of the v0.3.0 JSON-RPC binding (spec 6.11, 7).

One request model per method, told apart by ``method`` in ``A2ARequest``, and the two
response shapes. Only the wire shape of an error lives here; the A2A error classes,
with their codes, are in ``parley.protocol``.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, SerializerFunctionWrapHandler, StrictInt, StrictStr, model_serializer

from parley.types._base import A2AModel
from parley.types._params import (
    DeleteTaskPushNotificationConfigParams,
    GetTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigParams,
    MessageSendParams,
    TaskIdParams,
    TaskQueryParams,
)
from parley.types._push import TaskPushNotificationConfig

# Strict, so that neither `true` nor `1.0` passes for an id and none is rewritten: the
# response must echo exactly the id the caller sent.
_RequestId = StrictStr | StrictInt | None


class _Envelope(A2AModel):
    # JSON-RPC requires these members even when null, but `to_wire` drops every None.
    _kept_when_null: ClassVar[tuple[str, ...]] = ("id",)

    id: _RequestId
    """The caller's request id, echoed in the response; ``null`` when it was unreadable."""

    @model_serializer(mode="wrap")
    def _keep_null_members(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        wire: dict[str, Any] = handler(self)
        for name in self._kept_when_null:
            wire.setdefault(name, None)
        return wire


class _Request(_Envelope):
    jsonrpc: Literal["2.0"]


class SendMessageRequest(_Request):
    method: Literal["message/send"] = "message/send"
    params: MessageSendParams


class SendStreamingMessageRequest(_Request):
    method: Literal["message/stream"] = "message/stream"
    params: MessageSendParams


class GetTaskRequest(_Request):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskQueryParams


class CancelTaskRequest(_Request):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskIdParams


class SetTaskPushNotificationConfigRequest(_Request):
    method: Literal["tasks/pushNotificationConfig/set"] = "tasks/pushNotificationConfig/set"
    params: TaskPushNotificationConfig


class GetTaskPushNotificationConfigRequest(_Request):
    method: Literal["tasks/pushNotificationConfig/get"] = "tasks/pushNotificationConfig/get"
    params: GetTaskPushNotificationConfigParams


class ListTaskPushNotificationConfigRequest(_Request):
    method: Literal["tasks/pushNotificationConfig/list"] = "tasks/pushNotificationConfig/list"
    params: ListTaskPushNotificationConfigParams


class DeleteTaskPushNotificationConfigRequest(_Request):
    method: Literal["tasks/pushNotificationConfig/delete"] = "tasks/pushNotificationConfig/delete"
    params: DeleteTaskPushNotificationConfigParams


class TaskResubscriptionRequest(_Request):
    method: Literal["tasks/resubscribe"] = "tasks/resubscribe"
    params: TaskIdParams


class GetAuthenticatedExtendedCardRequest(_Request):
    method: Literal["agent/getAuthenticatedExtendedCard"] = "agent/getAuthenticatedExtendedCard"
    params: dict[str, Any] | None = None
    """The schema defines no params for this method; any sent are kept, unread."""


A2ARequest = Annotated[
    SendMessageRequest
    | SendStreamingMessageRequest
    | GetTaskRequest
    | CancelTaskRequest
    | SetTaskPushNotificationConfigRequest
    | GetTaskPushNotificationConfigRequest
    | ListTaskPushNotificationConfigRequest
    | DeleteTaskPushNotificationConfigRequest
    | TaskResubscriptionRequest
    | GetAuthenticatedExtendedCardRequest,
    Field(discriminator="method"),
]
"""Any A2A JSON-RPC request, told apart by its ``method``."""


class JSONRPCError(A2AModel):
    code: int
    message: str
    data: Any | None = None
    """Extra detail about the error, in any JSON shape."""


class JSONRPCErrorResponse(_Envelope):
    jsonrpc: Literal["2.0"] = "2.0"
    error: JSONRPCError


class JSONRPCSuccessResponse(_Envelope):
    _kept_when_null = ("id", "result")

    jsonrpc: Literal["2.0"] = "2.0"
    result: Any
    """The method's result: a wire model, a list of them, or ``None``."""
