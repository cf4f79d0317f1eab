"""``parley serve`` turned on with the standard ``OTEL_*`` environment alone: it exports
OTLP over HTTP (protobuf) to a real receiver, which decodes the export requests; the
caller's ``traceparent`` is the served span's parent; ``--log-format json`` writes one
JSON object a line."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from tests.servers import parley_serve
from tests.telemetry.otlp_receiver import otlp_receiver

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"


def test_parley_serve_exports_otlp_over_http(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with otlp_receiver() as (received, endpoint):
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
        monkeypatch.setenv("OTEL_SERVICE_NAME", "parley-under-test")
        monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
        monkeypatch.setenv("OTEL_METRIC_EXPORT_INTERVAL", "200")
        log = tmp_path / "serve.log"
        arguments = ["--db", "memory", "--log-format", "json", "--log-level", "info"]
        with parley_serve(arguments, log) as (_, base):
            request = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "message/send",
                "params": {
                    "message": {
                        "role": "user",
                        "parts": [{"kind": "text", "text": "hello"}],
                        "messageId": "m-1",
                        "kind": "message",
                    }
                },
            }
            traceparent = f"00-{TRACE_ID}-{CALLER_SPAN}-01"
            answer = httpx.post(f"{base}/", json=request, headers={"traceparent": traceparent})
            assert "result" in answer.json()

            def served() -> bool:
                return any(span.name == "SendMessage" for _, span in received.spans())

            received.wait(served)
            received.wait(lambda: "a2a.server.request.duration" in received.metric_names())
    (resource, span) = next((r, s) for r, s in received.spans() if s.name == "SendMessage")
    assert resource["service.name"] == "parley-under-test"
    assert span.trace_id.hex() == TRACE_ID
    assert span.parent_span_id.hex() == CALLER_SPAN
    attributes = {a.key: a.value.string_value for a in span.attributes}
    assert attributes["a2a.method.name"] == "SendMessage"
    assert attributes["a2a.message.id"] == "m-1"
    # --log-format json: uvicorn's access lines are JSON objects too
    lines = [line for line in log.read_text().splitlines() if line.startswith("{")]
    records = [json.loads(line) for line in lines]
    assert any(record["logger"] == "uvicorn.access" for record in records)
