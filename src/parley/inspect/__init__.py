"""The web inspector: a local page to talk to any A2A agent and see what goes over the
wire (``parley inspect``).

Sits on ``parley.client`` (every call the page makes goes through parley's public
client, on any binding and version), ``parley.protocol`` and ``parley.types``; the
``parley`` command sits on it. Its backend is a small Starlette app (the ``server``
extra); its page is plain HTML, CSS and JavaScript shipped in the package, with nothing
to build and nothing fetched from the network.
"""

from parley._extras import require

require("server", "parley inspect")

from parley.inspect._app import InspectorApp, create_inspector_app

__all__ = ["InspectorApp", "create_inspector_app"]
