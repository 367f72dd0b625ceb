"""A model reply is bounded as a whole (issue 15, items 3 and 4): a server trickling a byte at a time is cut off
at the run's deadline, however short its silences; a huge reply is refused while it is read; and a run whose
model trickles ends cleanly as `budget_exhausted:seconds`."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from repopilot.cli.main import main
from repopilot.core import DeadlineExceeded, ProviderError, load_trace
from repopilot.core.retry import RetryPolicy
from repopilot.providers.http_client import HttpClient

from .helpers import KEY


class Trickler:
    """Answers every request with headers, then `body` one byte per `every` seconds (never silent for long), or
    all at once when `every` is 0."""

    def __init__(self, body: bytes, every: float, *, stream: bool = False) -> None:
        self.body = body
        self.every = every
        self.stream = stream
        self.stopped = threading.Event()
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.threads: list[threading.Thread] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        self.sock.settimeout(0.2)
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            t = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            t.start()
            self.threads.append(t)

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            head, _, rest = data.partition(b"\r\n\r\n")
            length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length")), 0)
            while len(rest) < length:
                rest += conn.recv(65536)
            kind = b"text/event-stream" if self.stream else b"application/json"
            size = b"" if self.stream else b"Content-Length: %d\r\n" % len(self.body)
            try:
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: " + kind + b"\r\n" + size + b"\r\n")
                if not self.every:
                    conn.sendall(self.body)
                    return
                for i in range(len(self.body)):
                    if self.stopped.is_set():
                        return
                    conn.sendall(self.body[i:i + 1])
                    time.sleep(self.every)
            except OSError:  # the client gave up and closed: what we want
                return

    def close(self) -> None:
        self.stopped.set()
        self.sock.close()
        for t in self.threads:
            t.join(5)


@pytest.fixture
def trickler() -> Iterator[Trickler]:
    srv = Trickler(json.dumps({"choices": [{"message": {"content": "x" * 200}}]}).encode(), 0.2)
    try:
        yield srv
    finally:
        srv.close()


def _client(url: str, **kw: object) -> HttpClient:
    return HttpClient("testprov", url, retry=RetryPolicy(max_retries=0), **kw)  # type: ignore[arg-type]


def test_a_trickled_reply_is_cut_at_the_deadline(trickler: Trickler) -> None:
    started = time.monotonic()
    with pytest.raises(DeadlineExceeded, match="time budget ran out"):
        _client(trickler.url).post_json("/x", {}, deadline=time.monotonic() + 1.0)
    assert time.monotonic() - started < 2.0


def test_a_trickled_stream_is_cut_at_the_deadline() -> None:
    srv = Trickler(b"data: " + b"y" * 200 + b"\n\n", 0.2, stream=True)
    try:
        started = time.monotonic()
        with pytest.raises(DeadlineExceeded), _client(srv.url).stream_lines("/s", {},
                                                                             deadline=time.monotonic() + 1.0) as lines:
            list(lines)
        assert time.monotonic() - started < 2.0
    finally:
        srv.close()


def test_without_a_deadline_the_reply_bound_still_holds(trickler: Trickler) -> None:
    started = time.monotonic()
    with pytest.raises(ProviderError, match="no complete reply within 1s"):
        _client(trickler.url, max_reply_seconds=1.0).post_json("/x", {})
    assert time.monotonic() - started < 2.0


def test_a_huge_reply_is_refused_while_it_is_read() -> None:
    big = Trickler(b"{" + b" " * 3_000_000 + b"}", 0.0)
    try:
        with pytest.raises(ProviderError, match="larger than 1,000,000 bytes"):
            _client(big.url, max_reply_bytes=1_000_000).post_json("/x", {})
    finally:
        big.close()


def test_a_huge_stream_is_refused_while_it_is_read() -> None:
    big = Trickler(b"data: " + b"z" * 3_000_000 + b"\n\n", 0.0, stream=True)
    try:
        with pytest.raises(ProviderError, match="larger than 1,000,000 bytes"), \
                _client(big.url, max_reply_bytes=1_000_000).stream_lines("/s", {}) as lines:
            list(lines)
    finally:
        big.close()


def test_ask_with_a_trickling_model_ends_on_its_seconds_budget(trickler: Trickler, git_repo: Path,
                                                                monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("REPOPILOT_MODEL", "openai:gpt-4o-mini")
    monkeypatch.setenv("OPENAI_BASE_URL", trickler.url + "/v1")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    started = time.monotonic()
    code = main(["ask", "What does add do?", "--repo", str(git_repo), "--max-seconds", "1.5", "--json"])
    elapsed = time.monotonic() - started
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert elapsed < 4.0
    run = json.loads(captured.out)
    trace = load_trace(run["run_id"])
    assert trace.status == "budget_exhausted:seconds"
    assert any(s.type == "error" and "time budget" in (s.error or "") for s in trace.steps)
