"""Tasks and contexts belong to the principal who created them (docs/security.md "Task
ownership"): for anyone else every operation on them answers "task not found", on every
binding and every store, and the owner outlives a restart; an agent that declares no
security keeps them open (every other test of the suite)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from parley.client import APIKeyAuth, Client, ClientConfig, ClientFactory
from parley.protocol import TaskNotFoundError
from parley.server import APIKeyVerifier, GRPCOptions, create_app
from parley.server.push import PushSettings
from parley.stores import Store
from parley.stores._protocols import Append, StoredEvent, TaskQuery
from parley.stores.sql import SQLStore
from parley.types import (
    AgentCapabilities,
    APIKeySecurityScheme,
    Message,
    PushNotificationConfig,
    Role,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TextPart,
)
from tests.bindings.conftest import BINDINGS
from tests.server.agents import ScriptedAgent, card
from tests.servers import listening_socket
from tests.stores.databases import postgres_engine, sqlite_url

KEYS = {"alice": "k-alice", "bob": "k-bob"}
HOOK = "http://127.0.0.1:9/hook"  # allowed below; nothing listens there, nothing is posted


def _secured_app(store: Store) -> Any:
    agent_card = card(
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        security_schemes={"key": APIKeySecurityScheme(name="X-API-Key", in_="header")},
        security=[{"key": []}],
    )
    return create_app(
        ScriptedAgent(),
        agent_card,
        task_store=store,
        grpc=GRPCOptions(host="127.0.0.1", port=0),
        security={"key": APIKeyVerifier(KEYS)},
        push=PushSettings(allow=["127.0.0.1/32"]),
    )


async def _client(base: str, binding: str, who: str) -> Client:
    config = ClientConfig(transports=[binding], interceptors=[APIKeyAuth(KEYS[who])])
    return await ClientFactory(config).connect(base)


def _message(text: str, **fields: Any) -> Message:
    message_id = uuid.uuid4().hex
    return Message(role=Role.user, message_id=message_id, parts=[TextPart(text=text)], **fields)


def _push(task_id: str, config_id: str) -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig(
        task_id=task_id, push_notification_config=PushNotificationConfig(url=HOOK, id=config_id)
    )


@asynccontextmanager
async def _serving(
    store: Store, make_app: Callable[[Store], Any] = _secured_app
) -> AsyncIterator[str]:
    # uvicorn on the test's own event loop: the store's connections (asyncpg's) belong
    # to the loop that made them
    sock = listening_socket()  # held before the app's gRPC server takes a port 0
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        make_app(store), host="127.0.0.1", port=port, log_level="warning", lifespan="on"
    )
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        assert not serving.done(), "uvicorn did not start"
        await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await serving


@pytest.fixture
async def served(store: Store) -> AsyncIterator[str]:
    async with _serving(store) as base:
        yield base


async def _nothing_for_bob(bob: Client, task: Task) -> None:
    """Every operation bob tries on alice's task or context: "task not found"."""
    with pytest.raises(TaskNotFoundError):
        await bob.get_task(task.id)
    with pytest.raises(TaskNotFoundError):
        await bob.cancel_task(task.id)
    with pytest.raises(TaskNotFoundError):
        async for _ in bob.resubscribe(task.id):
            pass
    with pytest.raises(TaskNotFoundError):
        await bob.send_message(_message("sneak", task_id=task.id))
    with pytest.raises(TaskNotFoundError):
        await bob.send_message(_message("echo in", context_id=task.context_id))
    with pytest.raises(TaskNotFoundError):
        await bob.set_push_config(_push(task.id, "bob"))
    with pytest.raises(TaskNotFoundError):
        await bob.get_push_config(task.id, "alice")
    with pytest.raises(TaskNotFoundError):
        await bob.list_push_configs(task.id)
    with pytest.raises(TaskNotFoundError):
        await bob.delete_push_config(task.id, "alice")
    assert task.id not in [t.id for t in (await bob.list_tasks()).tasks]
    assert (await bob.list_tasks(context_id=task.context_id)).tasks == []


@pytest.mark.parametrize("binding", BINDINGS)
async def test_another_principal_finds_no_task(served: str, binding: str) -> None:
    """Spec 4.4 (authorization is the server's): bob learns nothing of alice's task or
    context, whatever operation he tries; alice keeps full use of them."""
    async with (
        await _client(served, binding, "alice") as alice,
        await _client(served, binding, "bob") as bob,
    ):
        task = await alice.send_message("ask")
        assert isinstance(task, Task)
        assert task.status.state is TaskState.input_required
        await alice.set_push_config(_push(task.id, "alice"))
        await _nothing_for_bob(bob, task)
        # dropped, as an id that does not exist is (docs/security.md, task ownership)
        references = [task.id, "no-such-task"]
        referring = await bob.send_message(_message("refs", reference_task_ids=references))
        assert isinstance(referring, Task)
        assert referring.status.state is TaskState.completed
        assert "none" in str(referring.artifacts)
        assert (await alice.get_task(task.id)).status.state is TaskState.input_required
        assert [c.push_notification_config.id for c in await alice.list_push_configs(task.id)] == [
            "alice"
        ]
        assert [t.id for t in (await alice.list_tasks()).tasks] == [task.id]
        done = await alice.send_message(_message("more", task_id=task.id))
        assert isinstance(done, Task)
        assert done.status.state is TaskState.completed
        follow = await alice.send_message(_message("echo again", context_id=task.context_id))
        assert isinstance(follow, Task)
        assert follow.context_id == task.context_id
        with pytest.raises(TaskNotFoundError):
            await bob.get_task(follow.id)
        assert {t.id for t in (await bob.list_tasks()).tasks} == {referring.id}


async def test_v03_rest_lists_only_the_callers_tasks(served: str) -> None:
    """v0.3.0's REST ``GET /v1/tasks`` (and v1.0 ListTasks above): a principal's list
    holds its own tasks only."""
    async with await _client(served, "JSONRPC", "alice") as alice:
        task = await alice.send_message("echo mine")
        assert isinstance(task, Task)
    async with httpx.AsyncClient() as http:
        for who, expected in (("alice", [task.id]), ("bob", [])):
            answer = await http.get(f"{served}/v1/tasks", headers={"X-API-Key": KEYS[who]})
            assert answer.status_code == 200
            assert [item["id"] for item in answer.json()] == expected


async def test_the_store_keeps_owners(store: Store) -> None:
    """Every store: the owner comes with the task's first event (group-commit writer or
    not) and is kept; a context belongs to the owner of its tasks; listing by owner."""
    first = Task(id="t1", context_id="c1", status=TaskStatus(state=TaskState.submitted))
    await store.append("t1", [StoredEvent(1, first)], owner="key:alice")
    other = Task(id="t2", context_id="c2", status=TaskStatus(state=TaskState.submitted))
    await store.append_many([_append("t2", other, "key:bob")])
    await store.append("t3", [StoredEvent(1, first.model_copy(update={"id": "t3"}))])
    snapshot = await store.get("t1")
    assert snapshot is not None
    assert snapshot.owner == "key:alice"
    working = first.model_copy(update={"status": TaskStatus(state=TaskState.working)})
    await store.append("t1", [StoredEvent(2, working)], snapshot=working)
    await store.save(working, 2)  # no owner given: the recorded one stays
    again = await store.get("t1")
    assert again is not None
    assert again.owner == "key:alice"
    later = await store.get("t2")
    assert later is not None
    assert later.owner == "key:bob"
    assert await store.context_owner("c1") == "key:alice"
    assert await store.context_owner("c2") == "key:bob"
    assert await store.context_owner("c3") is None
    mine = await store.list_tasks(TaskQuery(owner="key:alice"))
    assert ([t.id for t in mine.tasks], mine.total) == (["t1"], 1)
    in_context = await store.list_tasks(TaskQuery(owner="key:bob", context_id="c1"))
    assert (in_context.tasks, in_context.total) == ([], 0)
    everyone = await store.list_tasks(TaskQuery())
    assert everyone.total == 3
    third = first.model_copy(update={"id": "t3"})
    await store.save(third, 1, owner="key:carol")  # an owner for a task that had none
    carols = await store.list_tasks(TaskQuery(owner="key:carol"))
    assert ([t.id for t in carols.tasks], carols.total) == (["t3"], 1)


def _append(task_id: str, task: Task, owner: str) -> Append:
    return Append(task_id, [StoredEvent(1, task)], owner=owner)


@asynccontextmanager
async def _database(kind: str, directory: Path) -> AsyncIterator[Any]:
    """What a store is opened on: a SQLite URL, or a PostgreSQL engine."""
    if kind == "sqlite":
        yield sqlite_url(directory)
        return
    async with postgres_engine() as engine:
        yield engine


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def test_owners_survive_a_restart(kind: str, tmp_path: Path) -> None:
    """A server started again on the same database still keeps alice's task from bob."""
    async with _database(kind, tmp_path) as database:
        before = SQLStore(database)
        async with _serving(before) as base, await _client(base, "HTTP+JSON", "alice") as alice:
            task = await alice.send_message("ask")
            assert isinstance(task, Task)
        await before.aclose()
        after = SQLStore(database)
        try:
            async with _serving(after) as base:
                async with await _client(base, "GRPC", "bob") as bob:
                    await _nothing_for_bob(bob, task)
                async with await _client(base, "JSONRPC", "alice") as alice:
                    done = await alice.send_message(_message("more", task_id=task.id))
                    assert isinstance(done, Task)
                    assert done.status.state is TaskState.completed
        finally:
            await after.aclose()
