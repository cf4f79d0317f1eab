"""Tenants (v1.0.1 ``tenant``: the request field, the HTTP path's ``/{tenant}/``) keep
their tasks apart (docs/security.md "Tenants"): a task made under one tenant is "not
found" under another, for every operation, on every binding and store, after a restart
too; with security, the tenant and the principal together own a task."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from parley.client import APIKeyAuth, Client, ClientConfig, ClientFactory, fetch_card
from parley.protocol import TaskNotFoundError
from parley.server import GRPCOptions, create_app
from parley.server.push import PushSettings
from parley.stores import MemoryStore, Store, StoredEvent
from parley.stores._protocols import TaskQuery
from parley.stores.sql import SQLStore
from parley.types import AgentCapabilities, Task, TaskState, TaskStatus
from tests.bindings.conftest import BINDINGS
from tests.server.agents import ScriptedAgent, card
from tests.stores.test_owners import KEYS, _database, _message, _nothing_for_bob, _push, _serving


def _open_app(store: Store) -> Any:
    """An agent that declares no security: tenants alone keep tasks apart."""
    agent_card = card(capabilities=AgentCapabilities(streaming=True, push_notifications=True))
    return create_app(
        ScriptedAgent(),
        agent_card,
        task_store=store,
        grpc=GRPCOptions(host="127.0.0.1", port=0),
        push=PushSettings(allow=["127.0.0.1/32"]),
    )


async def _client(
    base: str, binding: str, tenant: str | None, who: str | None = None, protocol: str = "1.0"
) -> Client:
    config = ClientConfig(
        transports=[binding],
        protocol=protocol,
        tenant=tenant,
        interceptors=[APIKeyAuth(KEYS[who])] if who else [],
    )
    return await ClientFactory(config).connect(base)


async def _tenant_task(client: Client) -> Task:
    task = await client.send_message("ask")
    assert isinstance(task, Task)
    assert task.status.state is TaskState.input_required
    await client.set_push_config(_push(task.id, "mine"))
    return task


async def _still_usable(client: Client, task: Task) -> None:
    """The task's own tenant keeps full use of it."""
    assert (await client.get_task(task.id)).status.state is TaskState.input_required
    assert [c.push_notification_config.id for c in await client.list_push_configs(task.id)] == [
        "mine"
    ]
    assert task.id in [t.id for t in (await client.list_tasks()).tasks]
    done = await client.send_message(_message("more", task_id=task.id))
    assert isinstance(done, Task)
    assert done.status.state is TaskState.completed


@pytest.mark.parametrize("binding", BINDINGS)
async def test_tenants_keep_tasks_apart(store: Store, binding: str) -> None:
    """Without security: acme's task is not found under globex nor with no tenant (the
    default tenant: every v0.3 request), for every operation; a task made with no
    tenant is not found under acme; each keeps full use of its own."""
    async with (
        _serving(store, _open_app) as base,
        await _client(base, binding, "acme") as acme,
        await _client(base, binding, "globex") as globex,
        await _client(base, binding, None) as nobody,
        await _client(base, binding, None, protocol="0.3") as old,
    ):
        task = await _tenant_task(acme)
        await _nothing_for_bob(globex, task)
        await _nothing_for_bob(nobody, task)
        with pytest.raises(TaskNotFoundError):
            await old.get_task(task.id)
        with pytest.raises(TaskNotFoundError):
            await old.send_message(_message("sneak", task_id=task.id))
        plain = await _tenant_task(nobody)
        with pytest.raises(TaskNotFoundError):  # its context has no owner: open (docs)
            await acme.get_task(plain.id)
        with pytest.raises(TaskNotFoundError):
            await acme.cancel_task(plain.id)
        with pytest.raises(TaskNotFoundError):
            await acme.send_message(_message("sneak", task_id=plain.id))
        with pytest.raises(TaskNotFoundError):
            await acme.list_push_configs(plain.id)
        assert plain.id not in [t.id for t in (await acme.list_tasks()).tasks]
        assert (await old.get_task(plain.id)).id == plain.id  # v0.3: the default tenant
        assert [t.id for t in (await nobody.list_tasks()).tasks] == [plain.id]
        assert (await nobody.list_tasks()).total_size == 1
        referring = await globex.send_message(_message("refs", reference_task_ids=[task.id]))
        assert isinstance(referring, Task)
        assert "none" in str(referring.artifacts)
        assert [t.id for t in (await globex.list_tasks()).tasks] == [referring.id]
        await _still_usable(acme, task)
        await _still_usable(nobody, plain)


@pytest.mark.parametrize("binding", BINDINGS)
async def test_tenant_and_principal_own_a_task_together(store: Store, binding: str) -> None:
    """With security: alice's task under acme is not found by alice under globex, by
    alice with no tenant (v1.0 or v0.3), nor by bob under acme."""
    async with (
        _serving(store) as base,
        await _client(base, binding, "acme", "alice") as alice,
        await _client(base, binding, "globex", "alice") as elsewhere,
        await _client(base, binding, None, "alice") as untenanted,
        await _client(base, binding, None, "alice", protocol="0.3") as old,
        await _client(base, binding, "acme", "bob") as bob,
    ):
        task = await _tenant_task(alice)
        for other in (elsewhere, untenanted, bob):
            await _nothing_for_bob(other, task)
        with pytest.raises(TaskNotFoundError):
            await old.get_task(task.id)
        with pytest.raises(TaskNotFoundError):
            await old.send_message(_message("sneak", task_id=task.id))
        own = await untenanted.send_message("ask")
        assert isinstance(own, Task)
        await _nothing_for_bob(alice, own)
        assert (await old.get_task(own.id)).id == own.id  # v0.3: the default tenant
        await _still_usable(alice, task)


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def test_tenants_survive_a_restart(kind: str, tmp_path: Path) -> None:
    """A server started again on the same database still keeps acme's task from globex."""
    async with _database(kind, tmp_path) as database:
        before = SQLStore(database)
        async with (
            _serving(before, _open_app) as base,
            await _client(base, "HTTP+JSON", "acme") as acme,
        ):
            task = await _tenant_task(acme)
        await before.aclose()
        after = SQLStore(database)
        try:
            async with _serving(after, _open_app) as base:
                async with await _client(base, "GRPC", "globex") as globex:
                    await _nothing_for_bob(globex, task)
                async with await _client(base, "JSONRPC", "acme") as acme:
                    await _still_usable(acme, task)
        finally:
            await after.aclose()


@pytest.mark.parametrize("binding", BINDINGS)
async def test_the_client_sends_its_interfaces_tenant(binding: str) -> None:
    """v1.0.1 §8.3.2: the client sends the selected interface's ``tenant`` in every
    request; ``ClientConfig.tenant`` overrides it."""
    async with _serving(MemoryStore(), _open_app) as base:
        served = await fetch_card(base)
        interfaces = [
            i.model_copy(update={"tenant": "acme"}) for i in served.supported_interfaces or ()
        ]
        card_of_acme = served.model_copy(update={"supported_interfaces": interfaces})
        config = ClientConfig(transports=[binding], protocol="1.0")
        async with (
            ClientFactory(config).create(card_of_acme) as by_card,
            await _client(base, binding, "acme") as acme,
            await _client(base, binding, "globex") as globex,
        ):
            task = await _tenant_task(by_card)
            assert (await acme.get_task(task.id)).id == task.id
            with pytest.raises(TaskNotFoundError):
                await globex.get_task(task.id)
            overridden = ClientConfig(transports=[binding], protocol="1.0", tenant="globex")
            async with ClientFactory(overridden).create(card_of_acme) as by_override:
                with pytest.raises(TaskNotFoundError):
                    await by_override.get_task(task.id)


async def test_the_default_tenant_lists_no_tenants_tasks(store: Store) -> None:
    """Every store: ``TaskQuery(owner="")`` (the default tenant of an agent without
    security) lists every task but the tenants' (owners ``/{tenant}/...``), with the
    other filters, pages and the total."""
    owners = [None, "key:alice", "/acme/", "/acme/key:bob", None, "/globex/"]
    for number, owner in enumerate(owners):
        state = TaskState.completed if number % 2 else TaskState.working
        task = Task(id=f"t{number}", context_id=f"c{number % 2}", status=TaskStatus(state=state))
        await store.append(task.id, [StoredEvent(1, task)], owner=owner)
        await asyncio.sleep(0.002)  # distinct status times
    mine = await store.list_tasks(TaskQuery(owner=""))
    assert ([t.id for t in mine.tasks], mine.total) == (["t4", "t1", "t0"], 3)
    first = await store.list_tasks(TaskQuery(owner="", limit=2))
    assert [t.id for t in first.tasks] == ["t4", "t1"]
    rest = await store.list_tasks(TaskQuery(owner="", limit=2, after=first.last))
    assert ([t.id for t in rest.tasks], rest.last) == (["t0"], None)
    working = await store.list_tasks(TaskQuery(owner="", state=TaskState.working))
    assert ([t.id for t in working.tasks], working.total) == (["t4", "t0"], 2)
    in_c1 = await store.list_tasks(TaskQuery(owner="", context_id="c1"))
    assert ([t.id for t in in_c1.tasks], in_c1.total) == (["t1"], 1)
    acme = await store.list_tasks(TaskQuery(owner="/acme/"))
    assert [t.id for t in acme.tasks] == ["t2"]
