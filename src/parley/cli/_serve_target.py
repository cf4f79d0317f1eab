"""What ``parley serve`` serves: the demo agent, or the ``module:attribute`` given,
imported from the current folder and built into an app with the store ``--db`` names.

Whatever goes wrong here is one line and exit code 2 (``fail``), before anything is
announced: a module that cannot be imported or raises while it is (with the line of the
user's code that raised), a card that lacks fields, an agent class instead of an
instance, a card given where the agent belongs.
"""

from __future__ import annotations

import importlib
import sys
import sysconfig
import traceback
from contextlib import suppress
from pathlib import Path
from typing import Any, NoReturn

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape

from parley.cli._db import DEFAULT_DB, task_store
from parley.server import A2AApp, APIKeyVerifier, CardError, create_app
from parley.stores import Store
from parley.types import AgentCard, APIKeySecurityScheme

console = Console(stderr=True, highlight=False)

API_KEY_SCHEME = "apiKey"
"""The name ``--api-key`` gives its scheme in the card's ``securitySchemes``."""

_LIBRARY_PATHS = (
    str(Path(__file__).parents[1]),  # parley
    sysconfig.get_paths()["purelib"],
    sysconfig.get_paths()["stdlib"],
    "<frozen",
)
"""Where frames that are not the user's code come from (the line named in an import
error is the last frame outside them)."""


def _require_api_key(card: AgentCard, keys: dict[str, str]) -> tuple[AgentCard, dict[str, Any]]:
    """``card`` declaring (only) an API key in header X-API-Key, and its verifier."""
    scheme = APIKeySecurityScheme(
        name="X-API-Key", in_="header", description="A key given to parley serve --api-key"
    )
    secured = card.model_copy(
        update={
            "security_schemes": {**(card.security_schemes or {}), API_KEY_SCHEME: scheme},
            "security": [{API_KEY_SCHEME: []}],
        }
    )
    return secured, {"security": {API_KEY_SCHEME: APIKeyVerifier(keys)}}


def load(
    target: str | None, db: str | None, options: dict[str, Any], keys: dict[str, str]
) -> tuple[A2AApp, Store | None]:
    """The app to serve, and the store opened for it from ``--db`` (``None`` for an app
    built with its own store, which its builder closes)."""
    if target is None:
        from parley.demo import demo, demo_card

        demo_agent_card = demo_card()
        if keys:
            demo_agent_card, security = _require_api_key(demo_agent_card, keys)
            options = {**options, **security}
        store = task_store(db or DEFAULT_DB)
        return create_app(demo, demo_agent_card, task_store=store, **options), store
    value, module = _import(target)
    if isinstance(value, A2AApp):
        if db is not None:
            fail(
                f"--db does not apply to {target}: it is an app built with its own store. "
                "Give create_app(task_store=open_store(...)) the store there, or point "
                "parley serve at the agent (module:agent, with `card` beside it)"
            )
        if options or keys:
            fail(f"{target} is a built A2AApp: give it push settings, keys and its bus in code")
        return value, None
    if isinstance(value, AgentCard):
        fail(
            f"{target} is the card: name the agent beside it (module:agent, an "
            "AgentExecutor instance or an @agent function; its card is read from `card`)"
        )
    card: Any = getattr(module, "card", None)
    if not isinstance(card, AgentCard):
        fail(f"{target} is an agent, but {module.__name__!r} defines no `card` (an AgentCard)")
    if "push" in options and not card.capabilities.push_notifications:
        fail("--allow-push-to: the card does not declare capabilities.pushNotifications")
    if keys:
        card, security = _require_api_key(card, keys)
        options = {**options, **security}
    store = task_store(db or DEFAULT_DB)
    try:
        return create_app(value, card, task_store=store, **options), store
    except (TypeError, CardError) as error:
        fail(f"{target}: {error}")


def _import(target: str) -> tuple[Any, Any]:
    """The attribute ``module:attribute`` names, and its module (imported from the
    current directory first, as uvicorn does)."""
    module_name, _, attribute = target.partition(":")
    if not attribute:
        fail(f"{target!r} is not of the form module:attribute")
    sys.path.insert(0, ".")
    try:
        module = importlib.import_module(module_name)
    except Exception as error:  # whatever the module raises: one line, where it was raised
        fail(f"cannot import {module_name!r}: {_import_error(error)}")
    value: Any = getattr(module, attribute, None)
    if value is None:
        fail(f"{module_name!r} has no attribute {attribute!r}")
    return value, module


def _import_error(error: Exception) -> str:
    """What went wrong importing the user's module, on one line: a card's missing or
    invalid fields by name, anything else by its type and message, with the line of the
    user's code that raised it."""
    if isinstance(error, ModuleNotFoundError):
        what = str(error)
    elif isinstance(error, ValidationError):
        fields = ", ".join(
            ".".join(str(step) for step in problem["loc"]) + f" ({problem['msg'].lower()})"
            for problem in error.errors()
        )
        what = f"{error.title}: {fields}"
    else:
        message = str(error).strip().splitlines()
        what = f"{type(error).__name__}: {message[0]}" if message else type(error).__name__
    frames = traceback.extract_tb(error.__traceback__)
    own = [f for f in frames if not f.filename.startswith(_LIBRARY_PATHS)]
    if own:
        what += f" ({own[-1].filename}, line {own[-1].lineno})"
    return what


def fail(message: str) -> NoReturn:
    """``parley serve`` cannot start: one line, exit code 2."""
    console.print(f"[bold red]error:[/] {escape(message)}", soft_wrap=True)
    with suppress(Exception):
        sys.stderr.flush()
    raise typer.Exit(2)
