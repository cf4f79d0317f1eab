"""Check payloads against the normative A2A v0.3.0 JSON Schema.

``validate_wire("Task", payload)`` checks ``payload`` against ``#/definitions/Task``.
Use it on everything parley puts on the wire. The schema file is read once; set
``PARLEY_A2A_SCHEMA`` to use a copy somewhere else.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

import jsonschema

_DEFAULT_SCHEMA = Path(__file__).resolve().parents[1] / "spec" / "v0.3.0" / "a2a.json"


@functools.cache
def _definitions() -> dict[str, Any]:
    path = Path(os.environ.get("PARLEY_A2A_SCHEMA", _DEFAULT_SCHEMA))
    definitions: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))["definitions"]
    return definitions


@functools.cache
def _validator(definition_name: str) -> jsonschema.Draft7Validator:
    definitions = _definitions()
    if definition_name not in definitions:
        raise AssertionError(f"a2a.json has no definition {definition_name!r}")
    schema = {"$ref": f"#/definitions/{definition_name}", "definitions": definitions}
    return jsonschema.Draft7Validator(schema)


def schema_definition(definition_name: str) -> dict[str, Any]:
    """The schema of ``definition_name``, as a2a.json spells it."""
    definition: dict[str, Any] = _definitions()[definition_name]
    return definition


def validate_wire(definition_name: str, payload: object) -> None:
    """Assert that ``payload`` (JSON-ready data) is a valid ``definition_name``.

    Raises AssertionError naming every violation and where in the payload it is.
    """
    errors = sorted(_validator(definition_name).iter_errors(payload), key=_where)
    if not errors:
        return
    lines = [f"payload is not a valid {definition_name}:"]
    for error in errors:
        lines.append(f"  at {_where(error)}: {error.message}")
        lines.extend(f"    because at {_where(sub)}: {sub.message}" for sub in error.context or ())
    lines.append(f"payload: {json.dumps(payload, default=repr)[:2000]}")
    raise AssertionError("\n".join(lines))


def _where(error: jsonschema.ValidationError) -> str:
    return "/".join(str(step) for step in error.absolute_path) or "(root)"
