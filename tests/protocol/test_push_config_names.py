"""Push config resource names (spec 3.2.2, a2a.proto ``GetTaskPushNotificationConfigRequest``:
``name=tasks/{id}/pushNotificationConfigs/{config_id}``): the converter always writes a
whole name, the task's id standing for a missing config id, and still reads a bare
``tasks/{id}`` from older clients."""

from __future__ import annotations

import pytest

from parley.protocol.protobuf import PROTO_OPERATIONS, pb
from parley.protocol.protobuf._core import (
    config_name,
    parse_name,
    push_config_id,
    task_push_config_from_proto,
    task_push_config_to_proto,
)
from parley.types import (
    DeleteTaskPushNotificationConfigParams,
    GetTaskPushNotificationConfigParams,
    PushNotificationConfig,
    TaskPushNotificationConfig,
)


@pytest.mark.parametrize(
    ("config_id", "name"),
    [
        ("c1", "tasks/t1/pushNotificationConfigs/c1"),
        (None, "tasks/t1/pushNotificationConfigs/t1"),
        ("", "tasks/t1/pushNotificationConfigs/t1"),
    ],
)
def test_config_name_always_names_a_config(config_id: str | None, name: str) -> None:
    assert config_name("t1", config_id) == name
    assert parse_name(name) == ("t1", push_config_id("t1", config_id))


def test_get_request_without_a_config_id_names_the_task_id() -> None:
    to_proto = PROTO_OPERATIONS["get_push_config"].params_to_proto
    proto = to_proto(GetTaskPushNotificationConfigParams(id="t1"))
    assert proto.name == "tasks/t1/pushNotificationConfigs/t1"
    proto = to_proto(GetTaskPushNotificationConfigParams(id="t1", push_notification_config_id="c1"))
    assert proto.name == "tasks/t1/pushNotificationConfigs/c1"


def test_delete_request_names_its_config() -> None:
    params = DeleteTaskPushNotificationConfigParams(id="t1", push_notification_config_id="c1")
    proto = PROTO_OPERATIONS["delete_push_config"].params_to_proto(params)
    assert proto.name == "tasks/t1/pushNotificationConfigs/c1"


@pytest.mark.parametrize(
    ("name", "config_id"),
    [
        ("tasks/t1", None),  # what parley clients sent before
        ("tasks/t1/pushNotificationConfigs/t1", "t1"),
        ("tasks/t1/pushNotificationConfigs/c1", "c1"),
    ],
)
def test_server_reads_old_and_whole_names(name: str, config_id: str | None) -> None:
    from_proto = PROTO_OPERATIONS["get_push_config"].params_from_proto
    params = from_proto(pb.GetTaskPushNotificationConfigRequest(name=name))
    assert params == GetTaskPushNotificationConfigParams(
        id="t1", push_notification_config_id=config_id
    )


@pytest.mark.parametrize("config_id", [None, "c1", "t1"])
def test_a_config_keeps_its_id_or_its_lack_of_one(config_id: str | None) -> None:
    config = TaskPushNotificationConfig(
        task_id="t1",
        push_notification_config=PushNotificationConfig(url="https://a.example/", id=config_id),
    )
    proto = task_push_config_to_proto(config)
    assert proto.name == f"tasks/t1/pushNotificationConfigs/{config_id or 't1'}"
    assert task_push_config_from_proto(proto) == config


def test_a_config_without_an_id_takes_one_from_its_name() -> None:
    proto = pb.TaskPushNotificationConfig(
        name="tasks/t1/pushNotificationConfigs/c1",
        push_notification_config=pb.PushNotificationConfig(url="https://a.example/"),
    )
    assert task_push_config_from_proto(proto).push_notification_config.id == "c1"
