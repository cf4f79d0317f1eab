"""docs/bindings.md's error table is the error tree (spec 8.2, 3.4.1: same errors)."""

from __future__ import annotations

from pathlib import Path

from parley.protocol import ERROR_CLASSES

DOC = Path(__file__).parents[2] / "docs" / "bindings.md"


def error_table() -> str:
    rows = [
        "| Error class | JSON-RPC code | HTTP status (0.3) | gRPC status (0.3) "
        "| ErrorInfo reason | HTTP (1.0) | gRPC (1.0) |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for error in ERROR_CLASSES:
        rows.append(
            f"| `{error.__name__}` | {error.code} | {error.http_status} | `{error.grpc_status}` "
            f"| `{error.reason}` | {error.v1_http_status} | `{error.v1_grpc_status}` |"
        )
    return "\n".join(rows)


def test_error_table_is_generated_from_the_error_tree() -> None:
    text = DOC.read_text(encoding="utf-8")
    documented = text.split("<!-- errors:start -->\n", 1)[1].split("\n<!-- errors:end -->", 1)[0]
    assert documented == error_table(), "regenerate the table in docs/bindings.md"
