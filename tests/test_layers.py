"""The layers of DESIGN.md: each package of parley imports only the layers below it
(every import, at the top of a module or inside a function). The server and the client
sit side by side, so neither imports the other; what both need (the JWKS fetch and
cache, ``parley._jwks``) sits below them. The speed seam, ``parley._speedups``, sits
beside the layers it serves (docs/architecture.md): it imports ``types``, ``protocol``
and ``stores``, and of the layers only ``protocol``, ``stores`` and ``server`` call it;
each of its modules imports no layer above the ones it serves (``SPEEDUPS_SERVE``)."""

from __future__ import annotations

import ast
from pathlib import Path

import parley

SOURCE = Path(parley.__file__).parent

BELOW = {
    "types": set(),
    "_proto": set(),
    "_jwks": set(),
    "_extras": set(),
    "telemetry": set(),
    "_speedups": {"types", "protocol", "stores"},
    "protocol": {"types", "_proto", "_speedups"},
    "stores": {"types", "protocol", "telemetry", "_speedups"},
    "server": {"types", "_proto", "protocol", "stores", "_jwks", "telemetry", "_speedups"},
    "client": {"types", "_proto", "protocol", "_jwks", "telemetry"},
    "check": {"types", "_proto", "protocol", "client", "_jwks"},
    "inspect": {"types", "_proto", "protocol", "client", "check", "_jwks"},
    "demo": {"types", "protocol", "stores", "server"},
    "cli": {
        "types",
        "protocol",
        "stores",
        "server",
        "client",
        "demo",
        "_jwks",
        "telemetry",
        "check",
        "inspect",
    },
}
"""Each package (or root module) of parley, and the ones it may import."""

BENEATH_ALL = {"_extras"}
"""Root modules every layer may import: which extra brings which optional module."""


def _imported(tree: ast.AST) -> set[str]:
    """The parley packages ``tree`` imports (``parley.X...`` -> ``X``)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
            if node.module == "parley":  # from parley import types
                names = [f"parley.{alias.name}" for alias in node.names]
        else:
            continue
        found |= {name.split(".")[1] for name in names if name.startswith("parley.")}
    return found


def test_each_layer_imports_only_the_layers_below_it() -> None:
    wrong = {}
    for path in SOURCE.rglob("*.py"):
        parts = path.relative_to(SOURCE).with_suffix("").parts
        if parts == ("__init__",):
            continue
        layer = parts[0]
        assert layer in BELOW, f"{path}: a package DESIGN.md's layers do not place"
        beyond = _imported(ast.parse(path.read_text())) - BELOW[layer] - {layer} - BENEATH_ALL
        if beyond:
            wrong[str(path.relative_to(SOURCE))] = sorted(beyond)
    assert not wrong, f"imports across the layers: {wrong}"


SPEEDUPS_SERVE = {
    "__init__": {"types"},
    "_switch": set(),
    "_ids": set(),
    "_copies": {"types"},
    "_getattr": {"types"},
    "_v03_json": {"types"},
    "_v1_json": {"types"},
    "_memory_pack": {"types", "protocol", "stores"},
    "_memory_index": {"types", "protocol", "stores"},
    "memory": {"types", "protocol", "stores"},
    "_chunks": {"types"},
    "_pg_batch": {"types", "protocol", "stores"},
    "postgres": {"types", "protocol", "stores"},
    "jsonrpc": {"types", "protocol"},
}
"""Each module of ``parley._speedups`` and the layers it may import: the lowest layer
that calls it and the layers below that one, so no layer reaches a layer above itself
through the seam. Every module of the package is named here."""


def test_each_speedup_imports_only_the_layer_it_serves_and_below() -> None:
    wrong = {}
    for path in (SOURCE / "_speedups").rglob("*.py"):
        name = path.relative_to(SOURCE / "_speedups").with_suffix("").as_posix()
        assert name in SPEEDUPS_SERVE, (
            f"_speedups/{name}.py: a module SPEEDUPS_SERVE does not place"
        )
        allowed = SPEEDUPS_SERVE[name] | {"_speedups"}
        beyond = _imported(ast.parse(path.read_text())) - allowed - BENEATH_ALL
        if beyond:
            wrong[name] = sorted(beyond)
    assert not wrong, f"speedups reaching above the layer they serve: {wrong}"


SERVER = SOURCE / "server"

ROOMS = {
    "agent": set(),
    "auth": {"agent"},
    "_card": {"agent", "auth"},
    "push": {"agent", "auth"},
    "tasks": {"agent", "auth", "push"},
    "bindings": {"agent", "auth", "_card", "tasks"},
}
"""The rooms of ``parley.server`` (docs/architecture.md), and the rooms each may import:
what agent authors write against (``agent``) is below everything; authentication and
the keys (``auth``) next; the card's checks, completion and signing (``_card``) and push
(``push``) sit on them; the task engine (``tasks``) runs agents and feeds push; the
bindings (``bindings``) call the engine. The app (every other module at the top of
``server/``: ``_app``, ``_settings``, ``_gc``) assembles them all, and no room imports it."""

_TOP = {"_app", "_settings", "_gc", "__init__"}
"""The app: the modules at the top of ``server/`` that may import every room."""


def _rooms_imported(tree: ast.AST) -> set[str]:
    """The rooms of ``parley.server`` that ``tree`` imports (``parley.server.X...`` -> ``X``)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
            if node.module == "parley.server":  # from parley.server import _gc
                names = [f"parley.server.{alias.name}" for alias in node.names]
        else:
            continue
        found |= {name.split(".")[2] for name in names if name.startswith("parley.server.")}
    return found


def test_each_room_of_the_server_imports_only_the_rooms_below_it() -> None:
    wrong = {}
    for path in SERVER.rglob("*.py"):
        parts = path.relative_to(SERVER).with_suffix("").parts
        room = parts[0]
        if room in _TOP:
            continue
        assert room in ROOMS, f"{path}: a module no room of the server places"
        beyond = _rooms_imported(ast.parse(path.read_text())) - ROOMS[room] - {room}
        if beyond:
            wrong[str(path.relative_to(SOURCE))] = sorted(beyond)
    assert not wrong, f"imports across the rooms of the server: {wrong}"


_OWNER = {
    "_runs",
    "_registry",
    "_live",
    "_leases",
    "_owners",
    "_following",
    "_publish",
    "_execute",
}
"""The lifecycle owner (``server/tasks/_runs.py``) and the modules it is made of."""


def test_only_the_lifecycle_owner_holds_tasks_and_takes_their_run_slots() -> None:
    """Outside the owner no code reads or changes the registry, counts holds, takes or
    frees a run slot or a lease by hand: it uses the owner's context managers."""
    by_hand = ("registry", "holders", "let_go(", "begin_turn(", "turn.end()", "turn.close()")
    wrong = {}
    for path in (SERVER / "tasks").glob("*.py"):
        if path.stem in _OWNER:
            continue
        found = [word for word in by_hand if word in path.read_text()]
        if found:
            wrong[path.name] = found
    for path in SERVER.rglob("*.py"):
        if "tasks" not in path.parts and "runs.registry" in path.read_text():
            wrong[str(path.relative_to(SERVER))] = ["runs.registry"]
    assert not wrong, f"the task lifecycle moved outside its owner: {wrong}"
