"""The names the gRPC binding puts on the wire, shared by the server and the client."""

from __future__ import annotations

SERVICE = "a2a.v1.A2AService"
"""The full name of the service of ``a2a.proto``: methods are ``/{SERVICE}/{grpc_method}``."""
V1_SERVICE = "lf.a2a.v1.A2AService"
"""The service of A2A v1.0 (v1.0.1's ``a2a.proto``, package ``lf.a2a.v1``), on the same
server and port."""
STATUS_DETAILS_METADATA = "grpc-status-details-bin"
"""Trailing metadata with the binary ``google.rpc.Status`` of an error, holding its
``google.rpc.ErrorInfo`` (v1.0.1 §10.6), on both services."""
ERROR_METADATA = "a2a-error-bin"
"""Trailing metadata with the A2A error as JSON (``A2AError.body``), so a parley client
rebuilds the exact class."""
FIRST_EVENT_METADATA = "a2a-first-event-id"
"""Initial metadata of a stream: the sequence number of its first event (gRPC has no
event ids; the events after it are numbered without gaps)."""
LAST_EVENT_METADATA = "last-event-id"
"""Request metadata resuming a stream after this sequence number, as SSE's
``Last-Event-ID``."""
