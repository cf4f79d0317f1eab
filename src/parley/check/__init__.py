"""Conformance checks of any A2A agent, on every version and binding it offers.

Sits on ``parley.client`` and ``parley.protocol`` (it uses them as any user would) and
never on ``parley.server``: it judges agents from the outside. A check is data (``Check``:
id, title, spec section, level, what it needs) and a small async function; ``run``
reads the agent's card, works out the versions and bindings it offers and runs every
check that applies, with bounded time, and returns a ``Report``. ``parley check URL``
is the command; ``run(app=...)`` checks an ASGI app in process, for a test suite.
"""

from parley.check._model import CHECKS, Check, Exchange, Level, Needs, Result, Scope, Status
from parley.check._report import as_json, junit, listing, markdown, summary, text
from parley.check._runner import Report, run, select

__all__ = [
    "CHECKS",
    "Check",
    "Exchange",
    "Level",
    "Needs",
    "Report",
    "Result",
    "Scope",
    "Status",
    "as_json",
    "junit",
    "listing",
    "markdown",
    "run",
    "select",
    "summary",
    "text",
]
