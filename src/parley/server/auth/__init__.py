"""Who is calling: the authenticator that checks the card's ``security``
(``_auth``), its verifiers (``_verifiers``, ``_jwt``), the agent's signing keys
(``_keys``) and the TLS client certificate for uvicorn (``_tls``)."""
