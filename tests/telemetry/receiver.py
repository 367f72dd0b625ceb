"""A loopback OTLP/HTTP receiver for tests: accepts POST /v1/traces, decodes the protobuf body with
opentelemetry-proto and keeps every span it was sent."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass
class ReceivedSpan:
    name: str
    kind: int
    trace_id: str
    span_id: str
    parent_span_id: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]
    status_code: int
    service_name: str | None


def _value(v: Any) -> Any:
    which = v.WhichOneof("value")
    if which == "array_value":
        return [_value(x) for x in v.array_value.values]
    return getattr(v, which) if which else None


def _attrs(kvs: Any) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in kvs}


@dataclass
class Receiver:
    url: str
    spans: list[ReceivedSpan] = field(default_factory=list)
    requests: int = 0
    paths: list[str] = field(default_factory=list)
    content_types: list[str] = field(default_factory=list)
    status: int = 200

    def by_name(self, name: str) -> list[ReceivedSpan]:
        return [s for s in self.spans if s.name == name]


def _decode(body: bytes) -> list[ReceivedSpan]:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    req = ExportTraceServiceRequest()
    req.ParseFromString(body)
    out = []
    for rs in req.resource_spans:
        service = _attrs(rs.resource.attributes).get("service.name")
        for ss in rs.scope_spans:
            for s in ss.spans:
                out.append(ReceivedSpan(
                    name=s.name, kind=s.kind, trace_id=s.trace_id.hex(), span_id=s.span_id.hex(),
                    parent_span_id=s.parent_span_id.hex(), start_ns=s.start_time_unix_nano,
                    end_ns=s.end_time_unix_nano, attributes=_attrs(s.attributes),
                    events=[(e.name, _attrs(e.attributes)) for e in s.events], status_code=s.status.code,
                    service_name=service))
    return out


@pytest.fixture
def otlp_receiver() -> Iterator[Receiver]:
    pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed: pip install -e '.[otel]'")
    pytest.importorskip("opentelemetry.proto")
    receiver = Receiver(url="")
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with lock:
                receiver.requests += 1
                receiver.paths.append(self.path)
                receiver.content_types.append(self.headers.get("Content-Type", ""))
                if self.path == "/v1/traces" and receiver.status == 200:
                    receiver.spans.extend(_decode(body))
            self.send_response(receiver.status if self.path == "/v1/traces" else 404)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
