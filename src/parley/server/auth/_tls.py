"""The ASGI TLS extension for uvicorn, which does not fill it: the client certificate a
mutual-TLS caller presented, for the ``mutualTLS`` scheme of the HTTP bindings.

Serve with ``uvicorn.run(app, http=TLSHTTPProtocol, ssl_keyfile=..., ssl_certfile=...,
ssl_ca_certs=<client CA>, ssl_cert_reqs=ssl.CERT_OPTIONAL)``: the TLS handshake verifies
a presented certificate against the CA, and every request on the connection carries it
as ``scope["extensions"]["tls"]["client_cert_chain"]`` (PEM, the client's first), as the
ASGI TLS extension specifies. Servers that fill the extension themselves need nothing.
"""

from __future__ import annotations

import ssl
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


class TLSHTTPProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol that also fills the ASGI TLS extension."""

    _tls: dict[str, Any] | None = None

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        ssl_object = transport.get_extra_info("ssl_object")
        if ssl_object is None:
            return
        der = ssl_object.getpeercert(binary_form=True)
        chain = [ssl.DER_cert_to_PEM_cert(der)] if der else []
        self._tls = {"client_cert_chain": chain, "tls_version": None, "cipher_suite": None}

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._tls is not None:
            extensions: Any = {"tls": self._tls}
            self.scope["extensions"] = extensions
