"""A small OTLP/HTTP receiver for tests: an HTTP server on 127.0.0.1 that decodes each
protobuf export request (spans at ``/v1/traces``, metrics at ``/v1/metrics``) as an
OpenTelemetry Collector would, and keeps what it decoded."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


class Received:
    def __init__(self) -> None:
        self.traces: list[ExportTraceServiceRequest] = []
        self.metrics: list[ExportMetricsServiceRequest] = []
        self.changed = threading.Condition()

    def spans(self) -> list[tuple[dict[str, Any], Any]]:
        """Every span received, with its resource's attributes."""
        found: list[tuple[dict[str, Any], Any]] = []
        with self.changed:
            for request in self.traces:
                for resource_spans in request.resource_spans:
                    resource = {
                        a.key: a.value.string_value for a in resource_spans.resource.attributes
                    }
                    for scope in resource_spans.scope_spans:
                        found.extend((resource, span) for span in scope.spans)
        return found

    def metric_names(self) -> set[str]:
        with self.changed:
            return {
                metric.name
                for request in self.metrics
                for resource in request.resource_metrics
                for scope in resource.scope_metrics
                for metric in scope.metrics
            }

    def wait(self, ready: Callable[[], bool], within: float = 60.0) -> None:
        deadline = time.monotonic() + within
        while not ready():
            assert time.monotonic() < deadline, "the export did not arrive"
            time.sleep(0.05)


@contextmanager
def otlp_receiver() -> Iterator[tuple[Received, str]]:
    """A running receiver and its endpoint (``http://127.0.0.1:PORT``)."""
    received = Received()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            assert self.headers["Content-Type"] == "application/x-protobuf"
            with received.changed:
                if self.path == "/v1/traces":
                    received.traces.append(ExportTraceServiceRequest.FromString(body))
                elif self.path == "/v1/metrics":
                    received.metrics.append(ExportMetricsServiceRequest.FromString(body))
            answer = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, name="otlp-receiver", daemon=True)
    thread.start()
    try:
        yield received, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
