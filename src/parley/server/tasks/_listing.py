"""ListTasks (v1.0.1 §3.1.4; v0.3 REST ``GET /v1/tasks``): the filters of the request
checked and turned into the store's ``TaskQuery``, the page turned into the result.

Tasks come latest status timestamp first (§3.1.4; ``status_time`` of
``stores._protocols``: a task keeps the latest it has had, so it only ever moves to the
front). The page token is opaque to the client: the base64url of the last task's
position (status time, id), so the next page starts exactly after it however many tasks
arrived or moved meanwhile (cursor pagination, never an offset): no task is listed
twice, and every task that did not move during the walk is listed. A task this process
runs is shown as it is now, not as last stored.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from datetime import datetime

from parley.protocol import InvalidParamsError
from parley.server.tasks._limits import check_history_length
from parley.server.tasks._live import LiveTask
from parley.stores import TaskStore
from parley.stores._protocols import TaskQuery
from parley.types import ListTasksParams, ListTasksResult, Task

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 100


async def list_tasks(
    store: TaskStore,
    running: Callable[[str], LiveTask | None],
    params: ListTasksParams,
    owner: str | None = None,
) -> ListTasksResult:
    """A page of the tasks ``params`` ask for; only ``owner``'s when one is given. A task
    a run of this process works on (``running``) is shown as it is now."""
    query = task_query(params, owner)
    page = await store.list_tasks(query)
    tasks = [_shown(running(task.id), task, params) for task in page.tasks]
    return ListTasksResult(
        tasks=tasks,
        next_page_token=_token(page.last) if page.last else "",
        page_size=query.limit,
        total_size=page.total,
    )


def task_query(params: ListTasksParams, owner: str | None = None) -> TaskQuery:
    """The store query for ``params``; raises ``InvalidParamsError`` naming a bad field."""
    size = DEFAULT_PAGE_SIZE if params.page_size is None else params.page_size
    if not 1 <= size <= MAX_PAGE_SIZE:
        raise InvalidParamsError(f"pageSize must be between 1 and {MAX_PAGE_SIZE}, not {size}")
    check_history_length(params.history_length)
    return TaskQuery(
        context_id=params.context_id or None,
        state=params.status,
        touched_after=_time(params.status_timestamp_after),
        after=_position(params.page_token) if params.page_token else None,
        limit=size,
        owner=owner,
    )


def _time(text: str | None) -> float | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise InvalidParamsError(
            f"statusTimestampAfter must be an ISO 8601 time, not {text!r}"
        ) from None


def _token(position: tuple[float, str]) -> str:
    raw = json.dumps(list(position), separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _position(token: str) -> tuple[float, str]:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        touched, task_id = json.loads(raw)
        return float(touched), str(task_id)
    except (binascii.Error, ValueError, TypeError):
        raise InvalidParamsError(
            "pageToken is not one this server gave out (use nextPageToken as it came)"
        ) from None


def _shown(live: LiveTask | None, stored: Task, params: ListTasksParams) -> Task:
    task = stored
    # A task run here as it is now. Not a copy here of one run elsewhere: unless a
    # reader here follows it, it hears of no event (see ``_bus``); the store has them.
    if live is not None and live.task is not None:
        task = live.task
    update: dict[str, object] = {}
    if not params.include_artifacts:
        update["artifacts"] = None
    length = params.history_length
    if length is not None and task.history is not None and len(task.history) > length:
        update["history"] = task.history[len(task.history) - length :] if length else []
    return task.model_copy(update=update) if update else task
