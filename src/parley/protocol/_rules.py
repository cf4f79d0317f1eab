"""Where the A2A versions answer the same request differently: one row per version.

The request handler serves every version with one engine; what a version's text says
differently about an operation is a field of its row here, read by the handler from the
version a call speaks (``rules_for``), never spelled out as a version test. docs/versions.md
says the same in prose.

=====================================  =========================  ==========================
operation, case                        v0.3 (and 2025-early)      v1.0
=====================================  =========================  ==========================
subscribe: where the stream ends       the end of the run (its    a terminal state, through
                                       ``final`` event)           the turns after a pause
subscribe to a terminal task           the Task, then the end     ``UnsupportedOperationError``
cancel a canceled task                 ``TaskNotCancelableError`` the canceled task
message to a terminal task             ``InvalidParamsError``     ``UnsupportedOperationError``
extended card the card does not        ``AuthenticatedExtended``  ``UnsupportedOperationError``
declare                                ``CardNotConfiguredError``
a push config the task does not have   ``InvalidParamsError``     ``TaskNotFoundError``
=====================================  =========================  ==========================
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from parley.protocol._errors import (
    A2AError,
    AuthenticatedExtendedCardNotConfiguredError,
    InvalidParamsError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from parley.protocol._states import ends_interaction, ends_task
from parley.types import Event


@dataclass(frozen=True, slots=True)
class VersionRules:
    """What one A2A version says where the versions differ (see the module docs)."""

    version: str
    subscription_ends: Callable[[Event], bool]
    """Whether a subscription's stream (``tasks/resubscribe``, ``SubscribeToTask``) ends
    with this event."""
    follows_pauses: bool
    """Whether a subscription to a task waiting for input (or authentication) stays open
    for the turns its next messages start (v1.0.1 3.1.6: until a terminal state)."""
    subscribe_to_terminal: type[A2AError] | None
    """The error subscribing to a task in a terminal state answers; ``None``: the
    stream gives the Task and ends."""
    cancel_canceled: type[A2AError] | None
    """The error canceling a task canceled already answers; ``None``: the canceled task
    (an idempotent cancel)."""
    message_to_terminal: type[A2AError]
    """The error a message to a task in a terminal state answers."""
    extended_card_undeclared: type[A2AError]
    """The error asking for the extended card answers when the card declares none."""
    push_config_missing: type[A2AError]
    """The error reading a push config the task does not have answers."""


V0_3_RULES = VersionRules(
    version="0.3",
    subscription_ends=ends_interaction,  # v0.3.0 7.2: the stream closes at ``final``
    follows_pauses=False,
    subscribe_to_terminal=None,  # v0.3.0 7.9 names no error for it
    cancel_canceled=TaskNotCancelableError,  # v0.3.0 8.2: completed, failed or canceled
    message_to_terminal=InvalidParamsError,
    extended_card_undeclared=AuthenticatedExtendedCardNotConfiguredError,  # v0.3.0 7.10
    push_config_missing=InvalidParamsError,
)

V1_0_RULES = VersionRules(
    version="1.0",
    subscription_ends=ends_task,  # v1.0.1 3.1.6
    follows_pauses=True,
    subscribe_to_terminal=UnsupportedOperationError,  # v1.0.1 3.1.6
    cancel_canceled=None,  # v1.0.1 3.3.1: operations are idempotent where they can be
    message_to_terminal=UnsupportedOperationError,  # v1.0.1 3.1.1, 3.1.2
    extended_card_undeclared=UnsupportedOperationError,  # v1.0.1 3.3.4
    push_config_missing=TaskNotFoundError,  # v1.0.1 3.1.8
)

RULES: dict[str, VersionRules] = {"0.3": V0_3_RULES, "2025-early": V0_3_RULES, "1.0": V1_0_RULES}
"""The rules of each version a call may speak (``CallContext.protocol_version``); the
2025-early dialect keeps v0.3's."""


def rules_for(version: str) -> VersionRules:
    """The rules of ``version`` (v0.3's for a version not in ``RULES``)."""
    return RULES.get(version, V0_3_RULES)
