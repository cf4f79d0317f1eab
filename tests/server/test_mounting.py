"""An A2AApp mounted in a Starlette (or FastAPI) app: with ``lifespan=a2a.lifespan`` the
host app runs the agent's start-up and shutdown, which a mounted app never gets by
itself: recovery of tasks a previous process left (spec 7.3: a task never stays
``working`` with no one on it), retention, the gRPC server (spec 3.2.2), and stopping
the runs still going. Served by uvicorn on 127.0.0.1."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import Mount

from parley.client import connect, text_of
from parley.protocol import TaskNotFoundError
from parley.server import (
    A2AApp,
    AgentContext,
    GRPCOptions,
    RequestHandler,
    Retention,
    agent,
    create_app,
)
from parley.server.tasks._recovery import RESTARTED
from parley.stores import MemoryStore
from parley.types import Task, TaskState
from tests.server.agents import card
from tests.servers import running

cancelled = threading.Event()


@agent
async def patient(ctx: AgentContext) -> AsyncIterator[str]:
    if ctx.text == "wait":
        await ctx.progress("waiting")
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()  # the shutdown stopped this run
    yield f"done: {ctx.text}"


def _host(a2a: A2AApp) -> Starlette:
    return Starlette(routes=[Mount("/agent", app=a2a)], lifespan=a2a.lifespan)


async def test_a_mounted_app_starts_grpc_and_stops_its_runs_at_shutdown() -> None:
    store = MemoryStore()
    a2a = create_app(patient, card(), task_store=store, grpc=GRPCOptions(port=0))
    cancelled.clear()
    with running(_host(a2a)) as base:
        grpc_port = a2a.grpc_port
        assert grpc_port is not None
        async with connect(f"{base}/agent", transports=["GRPC"]) as client:
            answered = await client.send_message("hello")
            assert isinstance(answered, Task)
            assert text_of(answered) == "done: hello"
            waiting = await client.send_message("wait", blocking=False)
            assert isinstance(waiting, Task)
    assert cancelled.is_set()
    assert a2a.grpc_port is None
    snapshot = await store.get(waiting.id)
    assert snapshot is not None
    assert snapshot.task.status.state == TaskState.working

    # the next process on the same store: recovery settles the task left working
    again = create_app(patient, card(), task_store=store)
    with running(_host(again)) as base:
        async with connect(f"{base}/agent") as client:
            settled = await client.get_task(waiting.id)
    assert settled.status.state == TaskState.failed
    assert text_of(settled.status.message) == RESTARTED


async def test_a_mounted_app_runs_retention() -> None:
    store = MemoryStore()
    first = create_app(patient, card(), task_store=store, retention=None)
    with running(_host(first)) as base:
        async with connect(f"{base}/agent") as client:
            ended = await client.send_message("hello")
    assert isinstance(ended, Task)
    # at start-up retention removes the tasks that ended longer ago than `ended`
    keep_nothing = Retention(ended=timedelta(0), waiting=timedelta(days=1))
    again = create_app(patient, card(), task_store=store, retention=keep_nothing)
    with running(_host(again)) as base:
        async with connect(f"{base}/agent") as client:
            await _removed(store, ended.id)
            with pytest.raises(TaskNotFoundError):
                await client.get_task(ended.id)


async def _removed(store: MemoryStore, task_id: str) -> None:
    """Wait (at most 10 s) until retention's first sweep, which runs in the background
    from start-up, has removed ``task_id``."""
    async with asyncio.timeout(10):
        while await store.get(task_id) is not None:  # noqa: ASYNC110 - no event to await
            await asyncio.sleep(0.01)


async def test_the_lifespan_refuses_to_run_twice() -> None:
    a2a = create_app(patient, card())
    async with a2a.lifespan():
        with pytest.raises(RuntimeError, match="already running"):
            async with a2a.lifespan():
                pass


async def test_an_app_serves_your_own_handler() -> None:
    class CountingHandler(RequestHandler):
        calls = 0

        async def get_task(self, params, call=None):  # type: ignore[no-untyped-def]
            CountingHandler.calls += 1
            return await super().get_task(params, call)

    handler = CountingHandler(patient, card())
    a2a = A2AApp(handler=handler)
    assert a2a.handler is handler
    async with a2a.lifespan(), connect(a2a) as client:
        task = await client.send_message("hello")
        assert isinstance(task, Task)
        await client.get_task(task.id)
    assert CountingHandler.calls == 1


def test_an_own_handler_with_options_of_the_handler_is_refused() -> None:
    handler = RequestHandler(patient, card())
    options: dict[str, Any] = {"task_store": MemoryStore(), "grpc": None}
    with pytest.raises(TypeError, match="task_store is the RequestHandler's own"):
        A2AApp(handler, **options)
    with pytest.raises(TypeError, match="wrong_name is unknown"):
        A2AApp(handler, wrong_name=1)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"create_app\(agent, card"):
        A2AApp(patient)


def test_an_agent_class_instead_of_an_instance_is_refused_at_start_up() -> None:
    class Greeter:
        async def execute(self, context: object, events: object) -> None: ...

        async def cancel(self, context: object, events: object) -> None: ...

    with pytest.raises(TypeError, match=r"class Greeter.*Greeter\(\)"):
        create_app(Greeter, card())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="@agent"):
        create_app(lambda ctx: None, card())  # type: ignore[arg-type]


async def test_a_grpc_port_another_process_listens_on_is_refused() -> None:
    """grpc's default SO_REUSEPORT would share the port, splitting calls between two
    servers; parley refuses to start instead."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        a2a = create_app(patient, card(), grpc=GRPCOptions(port=port))
        with pytest.raises(OSError, match=f"127.0.0.1:{port}.*in use"):
            async with a2a.lifespan():
                pass
    assert a2a.grpc_port is None


async def test_one_line_mounts_the_agent_in_a_fastapi_app_with_both_lifespans() -> None:
    from contextlib import asynccontextmanager

    from fastapi import FastAPI

    seen: list[str] = []

    @asynccontextmanager
    async def host_lifespan(app: FastAPI) -> AsyncIterator[None]:
        seen.append(f"host starts, agent's gRPC on {a2a.grpc_port is not None}")
        yield
        seen.append("host stops")

    api = FastAPI(lifespan=host_lifespan)

    @api.get("/hello")
    async def hello() -> dict[str, str]:
        return {"hello": "world"}

    a2a = create_app(patient, card(), grpc=GRPCOptions(port=0))
    a2a.mount_into(api, "/agent")
    with running(api) as base:
        assert a2a.grpc_port is not None
        async with connect(f"{base}/agent") as client:
            answered = await client.send_message("hello")
            assert isinstance(answered, Task)
            assert text_of(answered) == "done: hello"
        async with connect(f"{base}/agent", transports=["GRPC"]) as client:
            assert text_of(await client.send_message("again")) == "done: again"
        own = await asyncio.to_thread(httpx.get, f"{base}/hello")
        assert own.json() == {"hello": "world"}
    assert seen == ["host starts, agent's gRPC on True", "host stops"]
    assert a2a.grpc_port is None  # the agent's lifespan ended with the host's
