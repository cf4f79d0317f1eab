"""Message size limits agree across bindings (spec 3.2: the same request gets the same
result on every binding): a request up to the HTTP body limit is served over gRPC too,
whatever the size of its answer; one beyond it is refused with a clear error on all."""

from __future__ import annotations

import pytest

from parley.client import Client, text_of
from parley.protocol import InvalidRequestError
from parley.protocol._operations import MAX_REQUEST_SIZE
from parley.types import Task
from tests.bindings.conftest import BINDINGS, Served, connect


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_3_mb_message_is_echoed_on_every_binding(served: Served, binding: str) -> None:
    """A 3 MB message makes a task of more than 6 MB (history and artifact): more than
    gRPC's default 4 MiB, within what the HTTP bindings answer."""
    text = "x" * 3_000_000
    client: Client
    async with await connect(served, binding) as client:
        task = await client.send_message(f"echo {text}")
    assert isinstance(task, Task)
    assert text_of(task) == text


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_message_beyond_the_limit_is_refused_clearly(served: Served, binding: str) -> None:
    text = "x" * (MAX_REQUEST_SIZE + 1000)
    async with await connect(served, binding) as client:
        with pytest.raises(InvalidRequestError, match="larger than"):
            await client.send_message(f"echo {text}")


async def test_the_grpc_server_refuses_a_message_beyond_its_limit(served: Served) -> None:
    """A client that allows itself more still meets the server's limit, with the same
    error class as the HTTP bindings' 413."""
    from parley.client.transports._grpc import GRPCTransport

    transport = GRPCTransport(
        f"127.0.0.1:{served.app.grpc_port}", max_message_size=4 * MAX_REQUEST_SIZE
    )
    async with Client(transport) as client:
        with pytest.raises(InvalidRequestError, match="larger than"):
            await client.send_message("echo " + "x" * (MAX_REQUEST_SIZE + 1000))
