"""Push config operations on every binding (spec 7.5-7.8 over JSON-RPC, HTTP+JSON and
gRPC), against one real push-enabled server with its gRPC port, all on 127.0.0.1."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from parley.client import Client
from parley.client._factory import ClientConfig, ClientFactory
from parley.protocol import InvalidParamsError, TaskNotFoundError
from parley.server import GRPCOptions, create_app
from parley.server.push import PushSettings
from parley.types import (
    AgentCapabilities,
    PushNotificationAuthenticationInfo,
    PushNotificationConfig,
    Task,
    TaskPushNotificationConfig,
)
from tests.server.agents import ScriptedAgent, card
from tests.servers import running

BINDINGS = ("JSONRPC", "HTTP+JSON", "GRPC")
HOOK = "http://127.0.0.1:9/hook"  # allowed below; nothing listens there, nothing is posted


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    push_card = card(capabilities=AgentCapabilities(streaming=True, push_notifications=True))
    app = create_app(
        ScriptedAgent(),
        push_card,
        grpc=GRPCOptions(host="127.0.0.1", port=0),
        push=PushSettings(allow=["127.0.0.1/32"]),
    )
    with running(app) as url:
        yield url


@pytest.fixture(params=[(p, b) for p in ("0.3", "1.0") for b in BINDINGS], ids="-".join)
async def client(request: pytest.FixtureRequest, base: str) -> AsyncIterator[Client]:
    protocol, binding = request.param
    factory = ClientFactory(ClientConfig(transports=[binding], protocol=protocol))
    async with await factory.connect(base) as connected:
        yield connected


async def _task(client: Client) -> Task:
    result = await client.send_message("ask")  # input-required: stays, sends nothing
    assert isinstance(result, Task)
    return result


def _config(
    task_id: str, config_id: str | None = None, url: str = HOOK
) -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig(
        task_id=task_id,
        push_notification_config=PushNotificationConfig(url=url, id=config_id, token="tok"),
    )


async def test_set_get_list_delete(client: Client) -> None:
    """Spec 7.5-7.8: several configs per task, told apart by id."""
    task = await _task(client)
    first = await client.set_push_config(_config(task.id, "a"))
    assert first == _config(task.id, "a")
    await client.set_push_config(_config(task.id, "b"))
    assert await client.get_push_config(task.id, "b") == _config(task.id, "b")
    listed = await client.list_push_configs(task.id)
    assert [c.push_notification_config.id for c in listed] == ["a", "b"]
    await client.delete_push_config(task.id, "a")
    listed = await client.list_push_configs(task.id)
    assert [c.push_notification_config.id for c in listed] == ["b"]
    await client.delete_push_config(task.id, "a")  # already gone: not an error


async def test_a_config_without_id_gets_the_tasks_id(client: Client) -> None:
    task = await _task(client)
    stored = await client.set_push_config(_config(task.id))
    assert stored.push_notification_config.id == task.id
    assert await client.get_push_config(task.id) == stored
    replaced = await client.set_push_config(_config(task.id, task.id, url=HOOK + "2"))
    assert [c.push_notification_config.url for c in await client.list_push_configs(task.id)] == [
        replaced.push_notification_config.url
    ]


async def test_unknown_task_is_task_not_found(client: Client) -> None:
    """Spec 8.2: -32001 for a config of a task that does not exist."""
    with pytest.raises(TaskNotFoundError):
        await client.set_push_config(_config("no-such-task", "a"))
    with pytest.raises(TaskNotFoundError):
        await client.get_push_config("no-such-task", "a")
    with pytest.raises(TaskNotFoundError):
        await client.list_push_configs("no-such-task")
    with pytest.raises(TaskNotFoundError):
        await client.delete_push_config("no-such-task", "a")


async def test_unknown_config_id(client: Client) -> None:
    """A config the task does not have: v1.0.1 3.1.8 names TaskNotFoundError; v0.3 names
    none, and parley answers -32602."""
    task = await _task(client)
    v1 = client.transport.interface.protocol == "1.0"  # type: ignore[attr-defined]
    with pytest.raises(
        TaskNotFoundError if v1 else InvalidParamsError,
        match="no push notification config 'zz'",
    ):
        await client.get_push_config(task.id, "zz")


@pytest.mark.parametrize(
    "url",
    [
        "https://127.0.0.2/hook",
        "https://169.254.169.254/latest",
        "https://[::1]/hook",
        "https://10.0.0.1/hook",
        "http://93.184.216.34/hook",
        "ftp://127.0.0.1/hook",
    ],
)
async def test_a_refused_url_is_invalid_params_and_not_stored(client: Client, url: str) -> None:
    """Spec 9 (webhook URL validation): refused when set, with the reason, -32602."""
    task = await _task(client)
    with pytest.raises(InvalidParamsError, match=r"pushNotificationConfig\.url is refused"):
        await client.set_push_config(_config(task.id, "a", url=url))
    assert await client.list_push_configs(task.id) == []


async def test_credentials_with_no_usable_scheme_are_refused(client: Client) -> None:
    task = await _task(client)
    config = _config(task.id, "a")
    config.push_notification_config.authentication = PushNotificationAuthenticationInfo(
        schemes=["OAuth2"], credentials="x"
    )
    with pytest.raises(InvalidParamsError, match="Bearer, Basic"):
        await client.set_push_config(config)


async def test_message_send_sets_the_config_of_its_task(client: Client) -> None:
    """Spec 9.5: configuration.pushNotificationConfig on message/send."""
    result = await client.send_message(
        "ask", push_notification_config=PushNotificationConfig(url=HOOK, token="t")
    )
    assert isinstance(result, Task)
    [stored] = await client.list_push_configs(result.id)
    assert stored.push_notification_config == PushNotificationConfig(
        url=HOOK, token="t", id=result.id
    )


async def test_message_send_with_a_refused_url_starts_no_task(client: Client) -> None:
    with pytest.raises(InvalidParamsError, match="is refused"):
        await client.send_message(
            "echo x",
            push_notification_config=PushNotificationConfig(url="https://127.0.0.2/h"),
        )
