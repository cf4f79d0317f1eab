"""The 2025-early dialect's method table: each of its methods onto a core operation.

``tasks/send`` carries the task id the client chose (``NamedTaskSendParams``: the core
creates the task with it, or continues it); ``sessionId`` is the context. Requests that
name a session and a task are checked first: a task in another session is answered
``-32002`` ("Session not found"). Errors keep the core's codes but for the one whose code
means something else here: ``TaskNotCancelableError`` (-32002 in v0.3) is sent as the
generic server error ``-32000``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import to_json

from parley import types as core
from parley.protocol._dialect import Dialect, DialectMethod, TaskLookup
from parley.protocol._errors import (
    A2AError,
    InvalidParamsError,
    TaskNotCancelableError,
    shorten,
)
from parley.protocol._operations import BY_NAME, Operation
from parley.protocol._states import ends_interaction
from parley.protocol.early import _types as early
from parley.protocol.early._convert import (
    PUSH_CONFIG_ID,
    artifact_to_early,
    card_to_early,
    message_from_early,
    message_to_early,
    push_config_from_early,
    push_config_to_early,
    status_to_early,
    task_to_early,
)

NAME = "2025-early"

GET_CARD = Operation(
    name="get_card",
    params=None,
    result=core.AgentCard,
    streaming=False,
)
"""The public card as an operation (2025-early's ``agent/getCard``); the binding answers it
with the card the app publishes, so it is not a row of the core table."""

_Model = TypeVar("_Model", bound=BaseModel)


class SessionNotFoundError(A2AError):
    """The session a 2025-early request names does not hold the task (2025-early: -32002)."""

    code = -32002
    http_status = 404
    grpc_status = "NOT_FOUND"
    default_message = "Session not found"


def _parse(model: type[_Model], method: str, params: Any) -> _Model:
    if params is None:
        raise InvalidParamsError(f"{method} needs a params object")
    try:
        return model.model_validate(params)
    except ValidationError as error:
        raise InvalidParamsError.from_validation(method, error) from None


# -- decoding params --------------------------------------------------------------------


def _send(method: str) -> Callable[[Any], core.NamedTaskSendParams]:
    def decode(params: Any) -> core.NamedTaskSendParams:
        sent = _parse(early.TaskSendParams, method, params)
        try:
            message = message_from_early(sent.message, sent.id, sent.session_id)
        except ValueError as error:
            raise InvalidParamsError(
                f"Invalid params for {method}: message: {shorten(str(error), 200)}"
            ) from None
        push = sent.push_notification
        return core.NamedTaskSendParams(
            message=message,
            configuration=core.MessageSendConfiguration(
                accepted_output_modes=sent.accepted_output_modes,
                history_length=sent.history_length,
                push_notification_config=None
                if push is None
                else push_config_from_early(push.url, push.headers),
            ),
            metadata=sent.metadata,
        )

    return decode


def _get(params: Any) -> core.TaskQueryParams:
    query = _parse(early.TaskQueryParams, "tasks/get", params)
    return core.TaskQueryParams(
        id=query.id, history_length=query.history_length, metadata=query.metadata
    )


def _task_id(method: str) -> Callable[[Any], core.TaskIdParams]:
    def decode(params: Any) -> core.TaskIdParams:
        query = _parse(early.TaskQueryParams, method, params)
        return core.TaskIdParams(id=query.id, metadata=query.metadata)

    return decode


def _set_push(params: Any) -> core.TaskPushNotificationConfig:
    wanted = _parse(early.TaskPushNotificationParams, "tasks/pushNotification/set", params)
    return core.TaskPushNotificationConfig(
        task_id=wanted.id,
        push_notification_config=push_config_from_early(wanted.url, wanted.headers),
    )


def _get_push(params: Any) -> core.GetTaskPushNotificationConfigParams:
    query = _parse(early.TaskQueryParams, "tasks/pushNotification/get", params)
    return core.GetTaskPushNotificationConfigParams(
        id=query.id, push_notification_config_id=PUSH_CONFIG_ID, metadata=query.metadata
    )


def _no_params(params: Any) -> None:
    if params is not None and not isinstance(params, dict):
        raise InvalidParamsError("agent/getCard takes an empty params object")


# -- the session check ------------------------------------------------------------------


def _session_check(method: str) -> Callable[[Any, TaskLookup], Any]:
    """Refuse a request whose ``sessionId`` is not the session of the task it names."""

    async def check(params: Any, lookup: TaskLookup) -> Any:
        session = params.get("sessionId") if isinstance(params, dict) else None
        task_id = params.get("id") if isinstance(params, dict) else None
        if not isinstance(task_id, str):
            return None
        task = await lookup(task_id)
        if task is not None and isinstance(session, str) and session != task.context_id:
            raise SessionNotFoundError(
                f"Session {session} was not found for task {task_id} ({method})"
            )
        return task

    return check


# -- encoding results -------------------------------------------------------------------


def _task_result(result: Any, params: Any) -> bytes:
    """A task, or the agent's direct reply to ``tasks/send`` shown as a completed task."""
    if isinstance(result, core.Message):
        message = params.message
        reply = early.Task(
            id=message.task_id,
            session_id=message.context_id,
            status=early.TaskStatus(
                state=early.TaskState.completed, message=message_to_early(result)
            ),
        )
        return reply.to_json()
    return task_to_early(result).to_json()


def _push_result(result: Any, params: Any) -> bytes:
    return push_config_to_early(result.push_notification_config).to_json()


def _card_result(result: Any, params: Any) -> bytes:
    return card_to_early(result).to_json()


class StreamEncoder:
    """Encodes one stream's core events as 2025-early status and artifact events.

    Artifacts are numbered by their order in the task (those it had before the stream
    first); a ``Task`` or ``Message`` event becomes a status event, as 2025-early streams
    nothing else. ``final`` marks the event that ends the interaction.
    """

    def __init__(self, params: Any, before: core.Task | None) -> None:
        message = getattr(params, "message", None)
        self.task_id: str = message.task_id if message is not None else params.id
        self.state = core.TaskState.working if before is None else before.status.state
        self.indexes: dict[str, int] = {
            artifact.artifact_id: index
            for index, artifact in enumerate((before.artifacts if before else None) or ())
        }

    def __call__(self, event: Any) -> bytes:
        final = ends_interaction(event)
        if isinstance(event, core.TaskArtifactUpdateEvent):
            index = self.indexes.setdefault(event.artifact.artifact_id, len(self.indexes))
            artifact = artifact_to_early(
                event.artifact, index, bool(event.append), event.last_chunk
            )
            return early.TaskArtifactUpdateEvent(
                id=self.task_id, artifact=artifact, metadata=event.metadata
            ).to_json()
        if isinstance(event, core.TaskStatusUpdateEvent):
            self.state = event.status.state
            status = status_to_early(event.status)
            final = final or event.final
        elif isinstance(event, core.Task):
            self.state = event.status.state
            status = status_to_early(event.status)
            for known in event.artifacts or ():
                self.indexes.setdefault(known.artifact_id, len(self.indexes))
        else:  # a Message: with no task yet, the agent's whole answer
            state = self.state if event.task_id else core.TaskState.completed
            status = status_to_early(core.TaskStatus(state=state, message=event))
            final = final or not event.task_id
        return early.TaskStatusUpdateEvent(id=self.task_id, status=status, final=final).to_json()


def _stream_encoder(params: Any, before: Any) -> Callable[[Any], bytes]:
    return StreamEncoder(params, before)


def encode_error(error: A2AError) -> bytes:
    """The ``error`` member with 2025-early's codes (see the module docs)."""
    if not isinstance(error, TaskNotCancelableError):
        return error.body()
    body: dict[str, Any] = {"code": -32000, "message": error.message}
    if error.data is not None:
        body["data"] = error.data
    return to_json(body)


def _claims(params: Any) -> bool:
    return isinstance(params, dict) and "sessionId" in params


def _method(
    operation: str,
    decode: Callable[[Any], Any],
    encode: Callable[[Any, Any], bytes],
    *,
    checked: str | None = None,
) -> DialectMethod:
    op = BY_NAME[operation]
    return DialectMethod(
        op,
        decode,
        encode,
        stream_encoder=_stream_encoder if op.streaming else None,
        check=None if checked is None else _session_check(checked),
    )


EARLY = Dialect(
    name=NAME,
    methods={
        "agent/getCard": DialectMethod(GET_CARD, _no_params, _card_result),
        "tasks/send": _method(
            "send_message", _send("tasks/send"), _task_result, checked="tasks/send"
        ),
        "tasks/sendSubscribe": _method(
            "stream_message",
            _send("tasks/sendSubscribe"),
            _task_result,
            checked="tasks/sendSubscribe",
        ),
        "tasks/get": _method("get_task", _get, _task_result, checked="tasks/get"),
        "tasks/cancel": _method(
            "cancel_task", _task_id("tasks/cancel"), _task_result, checked="tasks/cancel"
        ),
        "tasks/resubscribe": _method(
            "resubscribe",
            _task_id("tasks/resubscribe"),
            _task_result,
            checked="tasks/resubscribe",
        ),
        "tasks/pushNotification/set": _method(
            "set_push_config", _set_push, _push_result, checked="tasks/pushNotification/set"
        ),
        "tasks/pushNotification/get": _method(
            "get_push_config", _get_push, _push_result, checked="tasks/pushNotification/get"
        ),
    },
    encode_error=encode_error,
    claims=_claims,
    hint=b'"sessionId"',
)
"""2025-early's JSON-RPC dialect. It shares ``tasks/get``, ``tasks/cancel`` and
``tasks/resubscribe`` with v0.3 and claims those requests that carry ``sessionId``."""
