"""The 2025-early dialect for the JSON-RPC transport.

``send_message`` starts a task with an id of the client's making, derived from the
message's id (so a retried message names the same task); ``sessionId`` is the
``context_id`` given, or the task's known session, or a new one.

``EarlyDialect`` turns the core operations into ``tasks/send``, ``tasks/sendSubscribe``,
``tasks/get``... and their answers back into core types, with the conversions the server
uses (``parley.protocol.early``). Every request that names a task carries ``sessionId``
(``null`` when the session is not known), so that an agent serving both this dialect and
v0.3 on one endpoint answers in this one. A stream of this dialect has no ``Task`` event:
the first status event of a stream that starts a task (or resubscribes) becomes the core
``Task`` a v0.3 stream starts with.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError
from pydantic_core import to_json

from parley import types as core
from parley.protocol import (
    A2AError,
    InvalidAgentResponseError,
    Operation,
    UnsupportedOperationError,
)
from parley.protocol.early import (
    SessionNotFoundError,
    event_from_early,
    message_to_early,
    push_config_from_early,
    push_config_to_early,
    task_from_early,
    wire,
)

_NEW_TASKS = uuid.UUID("6b1d3c8e-5f0a-4c2b-9d7e-2025ea51e002")
"""The id of a new task is derived from its first message's id: a message sent again
(a retry) names the same task."""

_METHODS = {
    "send_message": "tasks/send",
    "stream_message": "tasks/sendSubscribe",
    "get_task": "tasks/get",
    "cancel_task": "tasks/cancel",
    "resubscribe": "tasks/resubscribe",
    "set_push_config": "tasks/pushNotification/set",
    "get_push_config": "tasks/pushNotification/get",
}


class EarlyDialect:
    """The 2025-early dialect, for ``JSONRPCTransport(dialect=...)``.

    Remembers the session of each task it has seen, to name it in later requests.
    """

    def __init__(self) -> None:
        self.sessions: dict[str, str] = {}

    def body(self, request_id: int, operation: Operation, params: core.A2AModel | None) -> bytes:
        method = _METHODS.get(operation.name)
        if method is None:
            raise UnsupportedOperationError(
                f"{operation.jsonrpc_method} has no equivalent in the 2025-early dialect"
            )
        request = {"jsonrpc": "2.0", "id": request_id, "method": method}
        request["params"] = self._params(operation, params)
        return to_json(request)

    def _params(self, operation: Operation, params: core.A2AModel | None) -> dict[str, Any]:
        if isinstance(params, core.MessageSendParams):
            return self._send_params(params)
        if isinstance(params, core.TaskPushNotificationConfig):
            task_id = params.task_id
            pushed = push_config_to_early(params.push_notification_config)
            fields: dict[str, Any] = {"url": pushed.url, "headers": pushed.headers or {}}
        else:
            task_id = _task_of(params)
            history = getattr(params, "history_length", None)
            fields = {} if history is None else {"historyLength": history}
        return {"id": task_id, "sessionId": self.sessions.get(task_id), **fields}

    def _send_params(self, params: core.MessageSendParams) -> dict[str, Any]:
        message = params.message
        configuration = params.configuration or core.MessageSendConfiguration()
        if configuration.blocking is False:
            raise UnsupportedOperationError(
                "The 2025-early dialect has no non-blocking send; use stream_message"
            )
        if configuration.push_notification_config is not None:
            raise UnsupportedOperationError(
                "Send the push config with set_push_config in the 2025-early dialect"
            )
        task_id = _task_of(params)
        session = message.context_id or self.sessions.get(task_id) or uuid.uuid4().hex
        self.sessions[task_id] = session
        sent: dict[str, Any] = {
            "id": task_id,
            "sessionId": session,
            "message": message_to_early(message).to_wire(),
        }
        if configuration.accepted_output_modes is not None:
            sent["acceptedOutputModes"] = configuration.accepted_output_modes
        if configuration.history_length is not None:
            sent["historyLength"] = configuration.history_length
        if params.metadata is not None:
            sent["metadata"] = params.metadata
        return sent

    def result(self, operation: Operation, params: core.A2AModel | None, result: Any) -> Any:
        try:
            if operation.name in ("set_push_config", "get_push_config"):
                config = wire.PushNotificationConfig.model_validate(result)
                return core.TaskPushNotificationConfig(
                    task_id=_task_of(params),
                    push_notification_config=push_config_from_early(config.url, config.headers),
                )
            task = task_from_early(
                wire.Task.model_validate(result), self.sessions.get(_task_of(params))
            )
        except (ValidationError, ValueError) as error:
            raise InvalidAgentResponseError(
                f"The agent's answer to {_METHODS[operation.name]} is not a 2025-early "
                f"{'push config' if 'push' in operation.name else 'task'}: {error}"
            ) from None
        self.sessions.setdefault(task.id, task.context_id)
        return task

    def events(
        self, operation: Operation, params: core.A2AModel | None
    ) -> Callable[[Any], list[Any]]:
        task_id = _task_of(params)
        # A v0.3 stream opens with the Task when it starts one (or resubscribes), not
        # when it continues one: so does this one.
        continued = isinstance(params, core.MessageSendParams) and bool(params.message.task_id)
        started = continued

        def decode(result: Any) -> list[Any]:
            nonlocal started
            if not isinstance(result, dict):
                raise InvalidAgentResponseError("A 2025-early stream event must be an object")
            try:
                event = event_from_early(result, self.sessions.get(task_id, ""))
            except (ValidationError, ValueError) as error:
                raise InvalidAgentResponseError(f"Not a 2025-early stream event: {error}") from None
            if started:
                return [event]
            started = True
            return _opening(event, params)

        return decode

    def error(self, code: int, message: str | None, data: Any) -> A2AError:
        if code == SessionNotFoundError.code:
            return SessionNotFoundError(message, data=data)
        return A2AError.from_code(code, message, data)


def _opening(event: core.Event, params: core.A2AModel | None) -> list[Any]:
    """A stream's first event, with the ``Task`` a v0.3 stream would have opened with."""
    assert isinstance(event, core.TaskStatusUpdateEvent | core.TaskArtifactUpdateEvent)
    history = None
    if isinstance(params, core.MessageSendParams):
        sent = params.message
        history = [
            sent.model_copy(update={"task_id": event.task_id, "context_id": event.context_id})
        ]
    if isinstance(event, core.TaskStatusUpdateEvent):
        return [
            core.Task(
                id=event.task_id, context_id=event.context_id, status=event.status, history=history
            )
        ]
    status = core.TaskStatus(state=core.TaskState.working)
    task = core.Task(id=event.task_id, context_id=event.context_id, status=status, history=history)
    return [task, event]


def _task_of(params: core.A2AModel | None) -> str:
    if isinstance(params, core.MessageSendParams):
        message = params.message
        return message.task_id or str(uuid.uuid5(_NEW_TASKS, message.message_id))
    if isinstance(params, core.TaskPushNotificationConfig):
        return params.task_id
    return getattr(params, "id", "")
