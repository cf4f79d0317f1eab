"""How the gRPC server beside the app listens: public, and importable without grpcio."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class GRPCOptions:
    """Where and how the gRPC server listens (``create_app(..., grpc=GRPCOptions(...))``).

    ``port`` 0 takes a free port (see ``A2AApp.grpc_port`` once started); a port another
    process already listens on is refused at start-up, never shared. With both
    ``certificate_chain`` and ``private_key`` (PEM bytes) the port speaks TLS; without,
    plain HTTP/2, for localhost and for TLS ended at a proxy. A request message may be
    as large as the app's ``max_body_size`` (the HTTP body limit); answers have no limit,
    as over HTTP. ``client_ca`` (PEM) makes the port require of every caller a client
    certificate issued by it (mutual TLS): grpc's TLS either requires and verifies one,
    or does not ask for one at all.
    """

    host: str = "127.0.0.1"
    port: int = 50051
    certificate_chain: bytes | None = None
    private_key: bytes | None = None
    client_ca: bytes | None = None

    @property
    def tls(self) -> bool:
        return self.certificate_chain is not None and self.private_key is not None
