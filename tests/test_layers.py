"""The layers of DESIGN.md: each package of parley imports only the layers below it
(every import, at the top of a module or inside a function). The server and the client
sit side by side, so neither imports the other; what both need (the JWKS fetch and
cache, ``parley._jwks``) sits below them."""

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
    "protocol": {"types", "_proto"},
    "stores": {"types", "protocol", "telemetry"},
    "server": {"types", "_proto", "protocol", "stores", "_jwks", "telemetry"},
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
