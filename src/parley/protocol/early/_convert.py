"""Between the core types and the 2025-early shapes, both ways (server and client share it).

Where the two models differ:
- states: the core's ``submitted`` is 2025-early's ``created``; ``rejected`` is reported as
  ``failed`` and ``auth-required`` as ``input-required`` (the client must act);
- artifacts have no id in 2025-early, only their ``index`` among the task's artifacts; the
  client names an artifact by its index (``"0"``, ``"1"``...);
- messages have no ``messageId``; one is made up when a message comes in;
- ``sessionId`` is the core's ``contextId``.
"""

from __future__ import annotations

import uuid
from typing import Any

from parley import types as core
from parley.protocol.early import _types as early

STATE_TO_EARLY: dict[core.TaskState, str] = {
    core.TaskState.submitted: early.TaskState.created,
    core.TaskState.working: early.TaskState.working,
    core.TaskState.input_required: early.TaskState.input_required,
    core.TaskState.auth_required: early.TaskState.input_required,
    core.TaskState.completed: early.TaskState.completed,
    core.TaskState.canceled: early.TaskState.canceled,
    core.TaskState.failed: early.TaskState.failed,
    core.TaskState.rejected: early.TaskState.failed,
    core.TaskState.unknown: "unknown",
}
STATE_FROM_EARLY: dict[str, core.TaskState] = {
    early.TaskState.created: core.TaskState.submitted,
    **{state.value: state for state in core.TaskState},
}


# -- core -> 2025-early ---------------------------------------------------------------


def part_to_early(part: core.Part) -> early.Part:
    if isinstance(part, core.TextPart):
        return early.TextPart(text=part.text, metadata=part.metadata)
    if isinstance(part, core.DataPart):
        return early.DataPart(data=part.data, metadata=part.metadata)
    file = part.file
    content = early.FileContent(name=file.name, mime_type=file.mime_type)
    if isinstance(file, core.FileWithBytes):
        content.bytes = file.bytes
    else:
        content.uri = file.uri
    return early.FilePart(file=content, metadata=part.metadata)


def message_to_early(message: core.Message) -> early.Message:
    return early.Message(
        role=message.role.value,
        parts=[part_to_early(part) for part in message.parts],
        metadata=message.metadata,
    )


def status_to_early(status: core.TaskStatus) -> early.TaskStatus:
    return early.TaskStatus(
        state=STATE_TO_EARLY[status.state],
        message=None if status.message is None else message_to_early(status.message),
        timestamp=status.timestamp,
    )


def artifact_to_early(
    artifact: core.Artifact,
    index: int,
    append: bool | None = None,
    last_chunk: bool | None = None,
) -> early.Artifact:
    return early.Artifact(
        name=artifact.name,
        description=artifact.description,
        parts=[part_to_early(part) for part in artifact.parts],
        index=index,
        append=append,
        last_chunk=last_chunk,
        metadata=artifact.metadata,
    )


def task_to_early(task: core.Task) -> early.Task:
    return early.Task(
        id=task.id,
        session_id=task.context_id,
        status=status_to_early(task.status),
        artifacts=None
        if task.artifacts is None
        else [artifact_to_early(a, index) for index, a in enumerate(task.artifacts)],
        history=None if task.history is None else [message_to_early(m) for m in task.history],
        metadata=task.metadata,
    )


def card_to_early(card: core.AgentCard) -> early.AgentCard:
    provider = card.provider
    capabilities = card.capabilities
    return early.AgentCard(
        name=card.name,
        description=card.description,
        url=card.url,
        provider=None
        if provider is None
        else early.AgentProvider(organization=provider.organization, url=provider.url),
        version=card.version,
        documentation_url=card.documentation_url,
        capabilities=early.AgentCapabilities(
            streaming=bool(capabilities.streaming),
            push_notifications=bool(capabilities.push_notifications),
            state_transition_history=bool(capabilities.state_transition_history),
        ),
        authentication=authentication_of(card),
        default_input_modes=card.default_input_modes,
        default_output_modes=card.default_output_modes,
        skills=[
            early.AgentSkill(
                id=skill.id,
                name=skill.name,
                description=skill.description,
                tags=skill.tags,
                examples=skill.examples,
                input_modes=skill.input_modes,
                output_modes=skill.output_modes,
            )
            for skill in card.skills
        ],
    )


def authentication_of(card: core.AgentCard) -> early.AgentAuthentication:
    """The schemes a card's ``security`` asks for, as 2025-early names them (``bearer``,
    ``basic``, ``apiKey``, ``oauth2``, ``openIdConnect``, ``mutualTLS``); none: ``[]``."""
    schemes: list[str] = []
    declared = card.security_schemes or {}
    for requirement in card.security or ():
        for name in requirement:
            scheme = declared.get(name)
            if scheme is None:
                continue
            spelled = (
                scheme.scheme.lower()
                if isinstance(scheme, core.HTTPAuthSecurityScheme)
                else scheme.type
            )
            if spelled not in schemes:
                schemes.append(spelled)
    return early.AgentAuthentication(schemes=schemes)


def push_config_to_early(config: core.PushNotificationConfig) -> early.PushNotificationConfig:
    """``url`` and ``headers``: the core's headers, and its credentials as an
    ``Authorization`` header."""
    headers = dict(config.headers or {})
    authentication = config.authentication
    if authentication is not None and authentication.credentials:
        scheme = authentication.schemes[0] if authentication.schemes else "Bearer"
        headers["Authorization"] = f"{scheme} {authentication.credentials}"
    return early.PushNotificationConfig(url=config.url, headers=headers or None)


# -- 2025-early -> core ---------------------------------------------------------------


def part_from_early(part: early.Part) -> core.Part:
    if isinstance(part, early.TextPart):
        return core.TextPart(text=part.text, metadata=part.metadata)
    if isinstance(part, early.DataPart):
        return core.DataPart(data=part.data, metadata=part.metadata)
    file = part.file
    content: core.FileWithBytes | core.FileWithUri
    if file.bytes is not None:
        content = core.FileWithBytes(bytes=file.bytes, name=file.name, mime_type=file.mime_type)
    elif file.uri is not None:
        content = core.FileWithUri(uri=file.uri, name=file.name, mime_type=file.mime_type)
    else:
        raise ValueError("a file part needs its bytes or a uri")
    return core.FilePart(file=content, metadata=part.metadata)


PUSH_CONFIG_ID = "2025-early"
"""The id of the push config a 2025-early client sets (the dialect has one per task, with
no id); its notifications carry the task in this dialect's shape."""


def push_config_from_early(url: str, headers: dict[str, str] | None) -> core.PushNotificationConfig:
    """The task's 2025-early push config (id ``PUSH_CONFIG_ID``). An ``Authorization:
    <scheme> <credentials>`` header becomes the core's authentication; the other headers
    are kept as they are, sent with every notification."""
    authentication = None
    kept = {}
    for name, value in (headers or {}).items():
        scheme, _, credentials = value.partition(" ")
        if name.lower() == "authorization" and credentials:
            authentication = core.PushNotificationAuthenticationInfo(
                schemes=[scheme], credentials=credentials
            )
        else:
            kept[name] = value
    return core.PushNotificationConfig(
        url=url, id=PUSH_CONFIG_ID, authentication=authentication, headers=kept or None
    )


def message_from_early(
    message: early.Message, task_id: str | None = None, context_id: str | None = None
) -> core.Message:
    return core.Message(
        message_id=str(uuid.uuid4()),
        role=core.Role(message.role),
        parts=[part_from_early(part) for part in message.parts],
        task_id=task_id,
        context_id=context_id,
        metadata=message.metadata,
    )


def status_from_early(status: early.TaskStatus, task_id: str, context_id: str) -> core.TaskStatus:
    message = status.message
    return core.TaskStatus(
        state=STATE_FROM_EARLY.get(status.state, core.TaskState.unknown),
        message=None if message is None else message_from_early(message, task_id, context_id),
        timestamp=status.timestamp,
    )


def artifact_from_early(artifact: early.Artifact) -> core.Artifact:
    return core.Artifact(
        artifact_id=str(artifact.index),
        name=artifact.name,
        description=artifact.description,
        parts=[part_from_early(part) for part in artifact.parts],
        metadata=artifact.metadata,
    )


def task_from_early(task: early.Task, context_id: str | None = None) -> core.Task:
    """A 2025-early task as a core ``Task``; ``context_id`` stands in for a missing
    ``sessionId``."""
    context = task.session_id or context_id or ""
    return core.Task(
        id=task.id,
        context_id=context,
        status=status_from_early(task.status, task.id, context),
        artifacts=None
        if not task.artifacts
        else [artifact_from_early(a) for a in task.artifacts if a.parts],
        history=None
        if task.history is None
        else [message_from_early(m, task.id, context) for m in task.history],
        metadata=task.metadata,
    )


def event_from_early(data: dict[str, Any], context_id: str) -> core.Event:
    """One event of a 2025-early stream (a status or an artifact event) as a core event."""
    if "artifact" in data:
        event = early.TaskArtifactUpdateEvent.model_validate(data)
        return core.TaskArtifactUpdateEvent(
            task_id=event.id,
            context_id=context_id,
            artifact=artifact_from_early(event.artifact),
            append=event.artifact.append,
            last_chunk=event.artifact.last_chunk,
            metadata=event.metadata,
        )
    status_event = early.TaskStatusUpdateEvent.model_validate(data)
    return core.TaskStatusUpdateEvent(
        task_id=status_event.id,
        context_id=context_id,
        status=status_from_early(status_event.status, status_event.id, context_id),
        final=status_event.final,
        metadata=status_event.metadata,
    )


def card_from_early(card: early.AgentCard) -> core.AgentCard:
    """A 2025-early card as a core ``AgentCard`` whose one interface is JSON-RPC at ``url``;
    ``bearer`` and ``basic`` schemes become HTTP security schemes."""
    schemes = {
        name: core.HTTPAuthSecurityScheme(scheme=name)
        for name in (
            s.lower() for s in (card.authentication.schemes if card.authentication else ())
        )
        if name in ("bearer", "basic")
    }
    capabilities = card.capabilities
    return core.AgentCard(
        name=card.name,
        description=card.description or "",
        url=card.url,
        version=card.version,
        capabilities=core.AgentCapabilities(
            streaming=capabilities.streaming,
            push_notifications=capabilities.push_notifications,
            state_transition_history=capabilities.state_transition_history,
        ),
        default_input_modes=card.default_input_modes,
        default_output_modes=card.default_output_modes,
        skills=[_skill_from_early(skill) for skill in card.skills],
        provider=None
        if card.provider is None
        else core.AgentProvider(
            organization=card.provider.organization, url=card.provider.url or ""
        ),
        documentation_url=card.documentation_url,
        security_schemes=schemes or None,
        security=[{name: []} for name in schemes] or None,
    )


def _skill_from_early(skill: early.AgentSkill) -> core.AgentSkill:
    return core.AgentSkill(
        id=skill.id,
        name=skill.name,
        description=skill.description or "",
        tags=skill.tags or [],
        examples=skill.examples,
        input_modes=skill.input_modes,
        output_modes=skill.output_modes,
    )
