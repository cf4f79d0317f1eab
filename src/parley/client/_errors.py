"""Failures of the calling side that are not answers of the agent.

They extend parley's one error tree (``parley.protocol``), so ``except A2AError`` catches
everything a client call can raise::

    A2AError
     +-- (the protocol's errors: TaskNotFoundError, UnauthenticatedError, ...)
     +-- ClientError                 the call got no protocol answer
          +-- AgentUnreachableError  no connection (refused, DNS, TLS)
          +-- ClientTimeoutError     a time limit of the client passed
          +-- NotAnAgentError        the peer answered, but not in A2A
          +-- StreamInterruptedError a stream stopped before its last event
          +-- CardError              an agent card could not be fetched or is invalid
"""

from __future__ import annotations

from typing import Any

from parley.protocol import A2AError


class ClientError(A2AError):
    default_message = "The A2A call failed on the client side"


class AgentUnreachableError(ClientError):
    default_message = "The agent cannot be reached"


class ClientTimeoutError(ClientError):
    default_message = "The agent did not answer in time"


class NotAnAgentError(ClientError):
    default_message = "The peer did not answer as an A2A agent"

    def __init__(
        self, message: str | None = None, *, data: Any = None, status_code: int | None = None
    ) -> None:
        super().__init__(message, data=data)
        self.status_code = status_code
        """The HTTP status of the answer, when there was one."""


class StreamInterruptedError(ClientError):
    default_message = "The stream stopped before its last event"

    def __init__(
        self, message: str | None = None, *, data: Any = None, last_event_id: int | None = None
    ) -> None:
        super().__init__(message, data=data)
        self.last_event_id = last_event_id
        """Sequence number of the last event received, to resume from."""


class CardError(ClientError):
    default_message = "The agent card is not valid"

    def __init__(
        self, message: str | None = None, *, data: Any = None, problems: list[str] | None = None
    ) -> None:
        super().__init__(message, data=data)
        self.problems = problems or []
        """Each problem found, as ``field: what is wrong``."""
