"""The names the gRPC binding puts on the wire, shared by the server and the client."""

from __future__ import annotations

SERVICE = "a2a.v1.A2AService"
"""The full name of the service of ``a2a.proto``: methods are ``/{SERVICE}/{grpc_method}``."""
ERROR_METADATA = "a2a-error-bin"
"""Trailing metadata with the A2A error as JSON (``A2AError.body``), so a parley client
rebuilds the exact class."""
FIRST_EVENT_METADATA = "a2a-first-event-id"
"""Initial metadata of a stream: the sequence number of its first event (gRPC has no
event ids; the events after it are numbered without gaps)."""
LAST_EVENT_METADATA = "last-event-id"
"""Request metadata resuming a stream after this sequence number, as SSE's
``Last-Event-ID``."""
