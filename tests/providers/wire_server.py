"""A loopback HTTP server that replays queued replies and records every request, for adapter tests."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "providers"

_CONTENT_TYPES = {".json": "application/json", ".sse": "text/event-stream", ".ndjson": "application/x-ndjson"}


def fixture_text(name: str) -> str:
    return (FIXTURES / name).read_text()


def fixture_json(name: str) -> Any:
    return json.loads(fixture_text(name))


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    # Streams are sent without a length and the connection is closed after them, as servers do.
    stream: bool = False
    # Seconds to wait before answering, to trip the client's read timeout.
    delay: float = 0.0

    @classmethod
    def json(cls, data: Any, status: int = 200, headers: dict[str, str] | None = None, delay: float = 0.0) -> Reply:
        return cls(status, json.dumps(data).encode(), headers=headers or {}, delay=delay)

    @classmethod
    def fixture(cls, name: str, status: int = 200) -> Reply:
        suffix = Path(name).suffix
        return cls(status, (FIXTURES / name).read_bytes(), _CONTENT_TYPES[suffix], stream=suffix != ".json")


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


class WireServer:
    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests: list[Recorded] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    body: Any = json.loads(raw)
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                server.requests.append(Recorded("POST", self.path, {k.lower(): v for k, v in self.headers.items()},
                                                body))
                reply = server.replies.pop(0) if server.replies else Reply.json(
                    {"error": {"message": "the test queued no reply for this request"}}, 599)
                if reply.delay:
                    time.sleep(reply.delay)
                self.send_response(reply.status)
                self.send_header("content-type", reply.content_type)
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                if reply.stream:
                    self.send_header("connection", "close")
                    self.end_headers()
                    self.wfile.write(reply.body)
                    self.wfile.flush()
                    self.close_connection = True
                else:
                    self.send_header("content-length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client that gave up (a timeout test) breaks the pipe; that is the point, not a failure

        self._httpd = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02},
                                        daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def queue(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def start(self) -> WireServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
