"""parley: the Agent2Agent (A2A) protocol for Python.

Layers, bottom to top: ``parley.types`` (wire model) -> ``parley.protocol`` (pure
protocol knowledge) -> ``parley.stores`` / ``parley.server`` / ``parley.client`` ->
``parley.cli``. Each layer imports only the layers below it (tests/test_layers.py), so
the server and the client do not import each other: what both need, the fetch and cache
of a JWKS, is ``parley._jwks``, below them.
"""

__version__ = "0.2.0"

__all__ = ["__version__"]
