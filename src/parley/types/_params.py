"""The params object of each A2A method (spec 7).

``TaskPushNotificationConfig`` (in ``_push``) is the params of
``tasks/pushNotificationConfig/set``. Range checks such as a negative ``historyLength``
are the request handler's, so every binding reports them the same way.
"""

from __future__ import annotations

from typing import Any

from parley.types._base import A2AModel
from parley.types._messages import Message
from parley.types._push import PushNotificationConfig
from parley.types._tasks import Task, TaskState


class MessageSendConfiguration(A2AModel):
    accepted_output_modes: list[str] | None = None
    """Output MIME types the client accepts."""
    blocking: bool | None = None
    """True: ``message/send`` returns only once the task is terminal or interrupted."""
    history_length: int | None = None
    """How many of the most recent history messages to return with the task."""
    push_notification_config: PushNotificationConfig | None = None


class MessageSendParams(A2AModel):
    message: Message
    configuration: MessageSendConfiguration | None = None
    metadata: dict[str, Any] | None = None


class TaskIdParams(A2AModel):
    id: str
    """The task's id."""
    metadata: dict[str, Any] | None = None


class TaskQueryParams(A2AModel):
    id: str
    """The task's id."""
    history_length: int | None = None
    """How many of the most recent history messages to return."""
    metadata: dict[str, Any] | None = None


class GetTaskPushNotificationConfigParams(A2AModel):
    id: str
    """The task's id."""
    push_notification_config_id: str | None = None
    """Which of the task's configs; the schema also accepts plain ``TaskIdParams`` here."""
    metadata: dict[str, Any] | None = None


class ListTaskPushNotificationConfigParams(A2AModel):
    id: str
    """The task's id."""
    metadata: dict[str, Any] | None = None


class DeleteTaskPushNotificationConfigParams(A2AModel):
    id: str
    """The task's id."""
    push_notification_config_id: str
    metadata: dict[str, Any] | None = None


class NamedTaskSendParams(MessageSendParams):
    """Send params in which ``message.task_id`` is a task id the caller chose: the task is
    created with that id when it does not exist yet, and continued when it does.

    A core extension, on no v0.3 wire (there the server chooses task ids); the 2025-early
    dialect's ``tasks/send`` decodes into it.
    """


class ListTasksParams(A2AModel):
    """The filters and page of ``ListTasks`` (v1.0.1 §3.1.4; v0.3's REST ``GET /v1/tasks``)."""

    context_id: str | None = None
    status: TaskState | None = None
    """Only tasks in this state."""
    status_timestamp_after: str | None = None
    """Only tasks whose status changed after this ISO 8601 time."""
    page_size: int | None = None
    """At most this many tasks (1 to 100; 50 when not given)."""
    page_token: str | None = None
    """The ``next_page_token`` of the page before."""
    history_length: int | None = None
    include_artifacts: bool | None = None
    """Artifacts are left out unless this is true."""
    tenant: str | None = None
    metadata: dict[str, Any] | None = None


class ListTasksResult(A2AModel):
    """One page of tasks, most recently updated first."""

    tasks: list[Task]
    next_page_token: str = ""
    """Empty on the last page."""
    page_size: int
    total_size: int
    """How many tasks match the filters, over all pages."""
