"""The shared client: which failures are retried, how long it waits, when it gives up, what the error says."""

from __future__ import annotations

import socket
import time

import pytest

from repopilot.core import ConfigError, ProviderError, Redactor, using_redactor
from repopilot.core.retry import RetryPolicy, parse_retry_after
from repopilot.providers.http_client import HttpClient, retry_policy_from_env, timeout_from_env

from .wire_server import Reply, WireServer

FAST = RetryPolicy(max_retries=2, initial_wait=0.01, max_wait=0.02)


def client(server: WireServer, retry: RetryPolicy = FAST, **kw: object) -> HttpClient:
    return HttpClient("testprov", server.url, {"authorization": "Bearer sk-test-abcdefghijklmnopqrstu"},
                      retry=retry, key_var="TEST_API_KEY", **kw)  # type: ignore[arg-type]


def test_429_with_retry_after_ms_then_success(server: WireServer) -> None:
    server.queue(Reply.json({"error": {"message": "Rate limit reached"}}, 429, {"retry-after-ms": "30"}),
                 Reply.json({"ok": True}))
    waits: list[float] = []
    http = client(server, sleep=waits.append)
    assert http.post_json("/x", {"a": 1}) == {"ok": True}
    assert len(server.requests) == 2
    assert waits == [0.03]
    assert http.last_retries == [{"attempt": 1, "status": 429, "wait_s": 0.03, "error": "HTTP 429"}]


def test_retry_after_seconds_is_honoured_with_a_real_sleep(server: WireServer) -> None:
    server.queue(Reply.json({}, 503, {"retry-after": "0.05"}), Reply.json({"ok": 1}))
    started = time.monotonic()
    assert client(server).post_json("/x", {}) == {"ok": 1}
    assert time.monotonic() - started >= 0.05


def test_retry_after_ms_wins_over_retry_after(server: WireServer) -> None:
    server.queue(Reply.json({}, 429, {"retry-after-ms": "10", "retry-after": "100"}), Reply.json({}))
    waits: list[float] = []
    client(server, sleep=waits.append).post_json("/x", {})
    assert waits == [0.01]


def test_500_exhausts_retries(server: WireServer) -> None:
    server.queue(*[Reply.json({"error": {"type": "server_error", "message": "boom"}}, 500)] * 3)
    http = client(server)
    with pytest.raises(ProviderError) as info:
        http.post_json("/x", {})
    assert len(server.requests) == 3  # the first try and two retries
    err = info.value
    assert err.status == 500 and err.provider == "testprov"
    assert "after 2 retries" in str(err) and "server_error: boom" in str(err)
    assert [r["attempt"] for r in http.last_retries] == [1, 2]


def test_backoff_grows_and_is_jittered() -> None:
    policy = RetryPolicy(initial_wait=0.5, max_wait=8.0)
    for n, base in [(1, 0.5), (2, 1.0), (3, 2.0), (6, 8.0), (9, 8.0)]:
        waits = {policy.backoff(n) for _ in range(50)}
        assert all(base * 0.75 <= w <= base for w in waits)
        assert len(waits) > 1


def test_a_wait_over_the_cap_is_not_honoured(server: WireServer) -> None:
    server.queue(Reply.json({}, 429, {"retry-after": "600"}), Reply.json({}))
    waits: list[float] = []
    with pytest.raises(ProviderError, match="asked to wait 600s"):
        client(server, sleep=waits.append).post_json("/x", {})
    assert waits == [] and len(server.requests) == 1


def test_no_wait_starts_that_would_end_after_the_deadline(server: WireServer) -> None:
    server.queue(Reply.json({}, 429, {"retry-after": "5"}), Reply.json({}))
    waits: list[float] = []
    with pytest.raises(ProviderError, match="time budget"):
        client(server, sleep=waits.append).post_json("/x", {}, deadline=time.monotonic() + 1.0)
    assert waits == [] and len(server.requests) == 1


@pytest.mark.parametrize(("status", "headers"), [(400, {}), (401, {}), (404, {}), (500, {"x-should-retry": "false"})])
def test_not_retried(server: WireServer, status: int, headers: dict[str, str]) -> None:
    server.queue(Reply.json({"error": {"message": "no"}}, status, headers), Reply.json({}))
    with pytest.raises(ProviderError) as info:
        client(server).post_json("/x", {})
    assert info.value.status == status and len(server.requests) == 1
    if status == 401:
        assert "TEST_API_KEY" in str(info.value)


def test_x_should_retry_true_retries_a_400(server: WireServer) -> None:
    server.queue(Reply.json({}, 400, {"x-should-retry": "true"}), Reply.json({"ok": 1}))
    assert client(server).post_json("/x", {}) == {"ok": 1}


def test_connection_errors_are_retried_then_reported() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    http = HttpClient("testprov", f"http://user:pw@127.0.0.1:{port}", retry=FAST)
    with pytest.raises(ProviderError) as info:
        http.post_json("/x", {})
    assert info.value.status is None
    assert "connection failed" in str(info.value) and "pw" not in str(info.value)
    assert len(http.last_retries) == 2


def test_secrets_in_an_error_body_are_redacted(server: WireServer) -> None:
    server.queue(Reply.json({"error": {"message": "bad key verysecretvalue123 / sk-proj-ABCDEFGHIJKLMNOPQRST"}}, 401))
    with using_redactor(Redactor.from_environ({"TEST_API_KEY": "verysecretvalue123"})), \
            pytest.raises(ProviderError) as info:
        client(server).post_json("/x", {})
    text = str(info.value)
    assert "verysecretvalue123" not in text and "sk-proj-ABCDEFGHIJKLMNOPQRST" not in text
    assert "[REDACTED]" in text


def test_non_json_reply_is_a_provider_error(server: WireServer) -> None:
    server.queue(Reply(200, b"<html>proxy login</html>", "text/html"))
    with pytest.raises(ProviderError, match="not JSON"):
        client(server).post_json("/x", {})


def test_stream_error_status_is_retried_before_the_first_byte(server: WireServer) -> None:
    server.queue(Reply.json({}, 529, {"retry-after-ms": "1"}), Reply(200, b"data: 1\n\ndata: 2\n\n",
                                                                       "text/event-stream", stream=True))
    http = client(server)
    with http.stream_lines("/s", {}) as lines:
        assert [line for line in lines if line] == ["data: 1", "data: 2"]
    assert http.last_retries[0]["status"] == 529
    assert server.requests[-1].headers["accept"] == "text/event-stream"


def test_parse_retry_after_forms() -> None:
    assert parse_retry_after({"retry-after-ms": "1500"}) == 1.5
    assert parse_retry_after({"retry-after": "7"}) == 7.0
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"}, now=1445412480.0) == 10.0
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None


def test_read_timeout_is_retried_then_reported(server: WireServer) -> None:
    server.queue(Reply.json({}, delay=0.5), Reply.json({"ok": 1}))
    http = client(server, timeout=timeout_from_env({"REPOPILOT_HTTP_TIMEOUT": "0.1"}))
    assert http.post_json("/x", {}) == {"ok": 1}
    assert http.last_retries[0]["status"] is None and http.last_retries[0]["error"] == "ReadTimeout"
    server.queue(*[Reply.json({}, delay=0.3)] * 3)
    with pytest.raises(ProviderError, match="timed out talking to"):
        http.post_json("/x", {})


@pytest.mark.parametrize(("name", "value"), [("REPOPILOT_HTTP_TIMEOUT", "soon"), ("REPOPILOT_MAX_RETRIES", "-1")])
def test_bad_settings_are_config_errors(name: str, value: str) -> None:
    with pytest.raises(ConfigError, match=name):
        if name == "REPOPILOT_HTTP_TIMEOUT":
            timeout_from_env({name: value})
        else:
            retry_policy_from_env({name: value})
    assert retry_policy_from_env({"REPOPILOT_MAX_RETRIES": "0"}).max_retries == 0
