import pytest

from repopilot.core import REDACTED, Redactor, TraceRecorder, read_trace, redact, redact_text, using_redactor
from repopilot.core.errors import ProviderError


@pytest.mark.parametrize(
    "text",
    [
        "key sk-proj-abcdefghijklmnopqrstuvwx12 in a log",
        "sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAA",
        "token ghp_0123456789abcdefghijABCDEFGHIJ012345",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
        "aws AKIAIOSFODNN7EXAMPLE here",
        "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig",
        '{"api_key": "abcdefgh12345678"}',
        "password=correct-horse-battery",
        "x-goog-api-key: AIzaSyA-1234567890abcdefghijklmnopqrstu",
    ],
)
def test_secret_shapes_are_redacted(text: str) -> None:
    out = redact_text(text, environ={})
    assert REDACTED in out
    for secret in ("abcdefghijklmnopqrstuvwx12", "AAAAAAAAAAAAAAAAAAAAAAAA", "0123456789abcdefghij",
                   "IOSFODNN7EXAMPLE", "payload.sig", "abcdefgh12345678", "correct-horse", "1234567890abcdef"):
        assert secret not in out


def test_ordinary_text_is_untouched() -> None:
    text = "FAILED tests/test_calc.py::test_add - assert 5 == -1 (token count 1500, keyboard)"
    assert redact_text(text, environ={}) == text


def test_environment_secret_values_are_redacted_anywhere() -> None:
    env = {"MY_SERVICE_TOKEN": "plainvalue-without-shape", "PATH": "/usr/bin:/bin", "DEBUG_KEY": "true"}
    out = redact({"a": ["x plainvalue-without-shape y"], "b": "/usr/bin:/bin true"}, environ=env)
    assert out == {"a": [f"x {REDACTED} y"], "b": "/usr/bin:/bin true"}


def test_trace_file_never_contains_env_secret(tmp_path) -> None:  # type: ignore[no-untyped-def]
    redactor = Redactor.from_environ({"OPENAI_API_KEY": "live-secret-value-123456"})
    rec = TraceRecorder.start("ask", "goal mentioning live-secret-value-123456", directory=tmp_path,
                              redactor=redactor)
    rec.step("tool_result", tool_name="read_file", result="echo live-secret-value-123456 and sk-abcdefghijklmnopqrstu")
    raw = rec.path.read_text()
    assert "live-secret-value-123456" not in raw
    assert "sk-abcdefghijklmnopqrstu" not in raw
    assert read_trace(rec.path).steps[0].result.count(REDACTED) == 2


def test_error_messages_are_redacted() -> None:
    with using_redactor(Redactor.from_environ({"ANTHROPIC_API_KEY": "anthropic-secret-999999"})):
        err = ProviderError("bad request", provider="anthropic", status=400,
                            body='{"error": "invalid x-api-key anthropic-secret-999999"}')
        assert "anthropic-secret-999999" not in str(err)
    assert "HTTP 400" in str(err)
