"""ListTasks over the wire (v1.0.1 §3.1.4, §11.5): its filters and pages on every v1.0
binding, its validation errors, and v0.3's REST ``GET /v1/tasks`` (v0.3.0's table)."""

from __future__ import annotations

import httpx
import pytest

from parley.protocol import InvalidParamsError
from parley.types import Task, TaskState
from tests.bindings.conftest import BINDINGS, Served, connect


@pytest.mark.parametrize("binding", BINDINGS)
async def test_filters_and_pages(served: Served, binding: str) -> None:
    """§3.1.4: by context, by status, artifacts only when asked, pages via the cursor."""
    async with await connect(served, binding, "1.0") as client:
        first = await client.send_message("echo one")
        assert isinstance(first, Task)
        second = await client.send_message("echo two", context_id=first.context_id)
        assert isinstance(second, Task)
        in_context = await client.list_tasks(context_id=first.context_id)
        assert [task.id for task in in_context.tasks] == [second.id, first.id]
        assert in_context.total_size == 2
        assert in_context.next_page_token == ""
        assert all(task.artifacts is None for task in in_context.tasks)
        with_artifacts = await client.list_tasks(
            context_id=first.context_id, include_artifacts=True
        )
        assert all(task.artifacts for task in with_artifacts.tasks)
        page = await client.list_tasks(context_id=first.context_id, page_size=1, history_length=0)
        assert [task.id for task in page.tasks] == [second.id]
        assert not page.tasks[0].history
        rest = await client.list_tasks(context_id=first.context_id, page_token=page.next_page_token)
        assert [task.id for task in rest.tasks] == [first.id]
        done = await client.list_tasks(context_id=first.context_id, status=TaskState.completed)
        assert done.total_size == 2
        none = await client.list_tasks(context_id=first.context_id, status=TaskState.working)
        assert none.tasks == []


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize(
    ("filters", "field"),
    [({"page_size": 0}, "pageSize"), ({"page_size": 101}, "pageSize"),
     ({"page_token": "not-ours"}, "pageToken"), ({"history_length": -1}, "historyLength")],
)  # fmt: skip
async def test_bad_filters_are_invalid_params(
    served: Served, binding: str, filters: dict[str, object], field: str
) -> None:
    """§3.3.2: validation errors name the parameter, on every binding alike."""
    async with await connect(served, binding, "1.0") as client:
        with pytest.raises(InvalidParamsError, match=field):
            await client.list_tasks(**filters)  # type: ignore[arg-type]


async def test_v03_rest_lists_tasks_as_an_array(served: Served) -> None:
    """v0.3.0's method table: ``GET /v1/tasks`` answers ``[Task]`` (one page)."""
    async with await connect(served, "JSONRPC", "0.3") as client:
        task = await client.send_message("echo listed")
        assert isinstance(task, Task)
    async with httpx.AsyncClient() as http:
        answer = await http.get(f"{served.base}/v1/tasks", params={"contextId": task.context_id})
    assert answer.status_code == 200
    assert [item["id"] for item in answer.json()] == [task.id]
    assert answer.json()[0]["status"]["state"] == "TASK_STATE_COMPLETED"
