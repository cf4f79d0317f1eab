"""The push config operations and ListTasks hold ids to the same limits as every other
operation (docs/security.md "Limits"), on every binding and version and every store: an
id that is too long or holds a control character is invalid params naming the field,
never a store error (PostgreSQL refuses a NUL), and the error never echoes the id (a
1 MB one overflows gRPC's metadata)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from parley.protocol import InvalidParamsError
from parley.server import GRPCOptions, create_app
from parley.types import AgentCapabilities, PushNotificationConfig, TaskPushNotificationConfig
from tests.bindings.conftest import BINDINGS, PROTOCOLS, Served, connect
from tests.server.agents import ScriptedAgent, card
from tests.servers import running
from tests.stores.databases import STORES, served_store

HUGE = "t" * 1_000_000
"""Too long to travel in a URL: sent where the id is in the body (JSON-RPC, gRPC)."""
BAD_IDS = [("t" * 300, "longer than 256"), ("a\x00b", "control character")]


@pytest.fixture(scope="module", params=STORES)
def push_served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    agent = ScriptedAgent()
    capabilities = AgentCapabilities(streaming=True, push_notifications=True)
    with served_store(request.param, tmp_path_factory.mktemp("store")) as store:
        app = create_app(
            agent,
            card(capabilities=capabilities),
            task_store=store,
            grpc=GRPCOptions(host="127.0.0.1", port=0),
        )
        with running(app) as base:
            yield Served(app, agent, base)


def _config(task_id: str, config_id: str = "c1") -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig(
        task_id=task_id,
        push_notification_config=PushNotificationConfig(id=config_id, url="https://example.com/h"),
    )


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_push_config_operations_check_ids(
    push_served: Served, protocol: str, binding: str
) -> None:
    bad_ids = [*BAD_IDS, *([(HUGE, "longer than 256")] if binding != "HTTP+JSON" else [])]
    async with await connect(push_served, binding, protocol) as client:
        for bad, problem in bad_ids:
            calls = {
                "set": client.set_push_config(_config(bad)),
                "get": client.get_push_config(bad, "c1"),
                "list": client.list_push_configs(bad),
                "delete": client.delete_push_config(bad, "c1"),
                "get config id": client.get_push_config("t-1", bad),
                "delete config id": client.delete_push_config("t-1", bad),
                "set config id": client.set_push_config(_config("t-1", bad)),
            }
            for name, call in calls.items():
                with pytest.raises(InvalidParamsError, match=problem) as raised:
                    await call
                assert bad not in raised.value.message, name
                assert len(raised.value.message) < 300, name


@pytest.mark.parametrize("binding", BINDINGS)
async def test_list_tasks_checks_the_context_id(push_served: Served, binding: str) -> None:
    """v1.0.1 §3.1.4: ListTasks' contextId filter is an id like any other."""
    async with await connect(push_served, binding, "1.0") as client:
        for bad, problem in BAD_IDS:
            with pytest.raises(InvalidParamsError, match=f"contextId.*{problem}") as raised:
                await client.list_tasks(context_id=bad)
            assert bad not in raised.value.message
