"""Issue 15 item 5: a seeded set of 44 fake but format-valid credentials (tests/secret_samples.py) must not reach
any output: stdout and the summary, the trace file, `runs show`, the HTML page, OTLP spans (content captured),
the Markdown report, and what the model is sent. The test asserts 100% recall on every output."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from repopilot.cli.main import main
from repopilot.core import Agent, Budgets, SystemMessage, ToolRegistry, TraceRecorder, UserMessage, tool
from repopilot.core.messages import ToolResultMessage
from repopilot.providers import ScriptedModel

from ..secret_samples import ENV_SECRET, samples
from .receiver import Receiver

SAMPLES = samples()


def _leaks(text: str) -> list[str]:
    """The samples whose secret (or a long middle part of it, or any long line of it) is in `text`."""
    return [name for name, _, secret in SAMPLES
            if secret in text or (len(secret) > 24 and secret[8:-8] in text)
            or any(len(part) >= 24 and part in text for part in secret.splitlines()[1:-1])]


def test_the_seeded_set_is_large_and_format_valid() -> None:
    assert len(SAMPLES) >= 40
    assert len({name for name, _, _ in SAMPLES}) == len(SAMPLES)


def test_no_seeded_secret_reaches_any_output(git_repo: Path, tmp_path: Path, otlp_receiver: Receiver,
                                             capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    leaky = "\n".join(line for _, line, _ in SAMPLES) + "\n"
    (git_repo / "leaks.txt").write_text(leaky)
    subprocess.run(["git", "add", "leaks.txt"], cwd=git_repo, check=True)
    script = tmp_path / "script.json"
    script.write_text(json.dumps([
        {"content": "Reading.", "tool_calls": [{"name": "read_file", "arguments": {"path": "leaks.txt"}}]},
        "Here is what I found:\n" + leaky,
    ]))
    monkeypatch.setenv("REPOPILOT_MODEL", f"scripted:{script}")
    monkeypatch.setenv("CI_BOT_TOKEN", ENV_SECRET)  # known from the environment: its base64 must go too
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    typed = next(secret for name, _, secret in SAMPLES if name == "openai")
    outputs: dict[str, str] = {}

    assert main(["ask", f"which keys leak? mine is {typed}", "--repo", str(git_repo)]) == 0
    shown = capsys.readouterr()
    outputs["stdout and summary"] = shown.out + shown.err
    (trace_file,) = (tmp_path / "runs").glob("*.json")
    run_id = trace_file.stem
    outputs["trace file"] = trace_file.read_text()

    assert main(["runs", "show", run_id]) == 0
    outputs["runs show"] = capsys.readouterr().out
    assert main(["runs", "show", run_id, "--json"]) == 0
    outputs["runs show --json"] = capsys.readouterr().out
    page = tmp_path / "run.html"
    assert main(["trace", "export", run_id, "--html", str(page)]) == 0
    outputs["HTML page"] = page.read_text()
    assert main(["trace", "export", run_id, "--otlp", otlp_receiver.url]) == 0
    capsys.readouterr()
    outputs["OTLP spans"] = repr([(s.name, s.attributes) for s in otlp_receiver.spans])

    log = tmp_path / "ci.log"  # a pytest failure whose assertion quotes every leaky line: the report shows them
    quoted = "".join(f"E       AssertionError: {part}\n" for _, line, _ in SAMPLES for part in line.splitlines())
    log.write_text("=== FAILURES ===\n______ test_config ______\n\n    def test_config():\n"
                   ">       assert load() == {}\n" + quoted
                   + "\ntests/test_config.py:3: AssertionError\n=== short test summary info ===\n"
                   "FAILED tests/test_config.py::test_config - AssertionError\n")
    assert main(["diagnose", str(log), "--format", "markdown", "--no-llm"]) == 0
    outputs["Markdown report"] = capsys.readouterr().out

    assert "Here is what I found" in outputs["stdout and summary"]  # the outputs hold the text, redacted
    assert "[REDACTED]" in outputs["trace file"] and "[REDACTED]" in outputs["Markdown report"]
    missed = {where: _leaks(text) for where, text in outputs.items() if _leaks(text)}
    assert not missed, f"secrets leaked: {missed}"


@tool
def read_env() -> str:
    """Read the .env file."""
    return "\n".join(line for _, line, _ in SAMPLES)


class _Recording(ScriptedModel):
    def __init__(self) -> None:
        super().__init__([{"tool_calls": [{"name": "read_env", "arguments": {}}]}, "done"])
        self.sent: list[str] = []

    def chat(self, messages, tools, **kwargs):  # type: ignore[no-untyped-def,override]
        self.sent += [m.content for m in messages if isinstance(m, ToolResultMessage)]
        return super().chat(messages, tools, **kwargs)


def test_tool_results_reach_the_model_redacted_and_redacted_before_the_cut(tmp_path: Path) -> None:
    model = _Recording()
    rec = TraceRecorder.start("ask", "goal", directory=tmp_path)
    # A cut in the middle of the PEM block and of the keys after it: redaction first, then the cut.
    agent = Agent(model, ToolRegistry([read_env]), rec, Budgets(), max_result_chars=1500)
    agent.run([SystemMessage(content="sys"), UserMessage(content="go")])
    assert model.sent and not _leaks("\n".join(model.sent))
    assert all(name not in {"pem-rsa"} for name in _leaks(model.sent[0]))


def test_a_streamed_answer_never_prints_a_key_split_across_fragments(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from repopilot.cli import ask as ask_cli

    buffer = io.StringIO()
    monkeypatch.setattr(ask_cli.out, "_file", buffer)
    printer = ask_cli._StreamPrinter()
    text = "The keys:\n" + "\n".join(line for _, line, _ in SAMPLES) + "\nThat is all.\n"
    for i in range(0, len(text), 7):  # fragments as a provider streams them: no fragment holds a whole key
        printer.write(text[i: i + 7])
        assert not _leaks(buffer.getvalue())
    printer.end_line()
    shown = buffer.getvalue()
    assert shown.startswith("The keys:") and "That is all." in shown and "[REDACTED]" in shown
    assert not _leaks(shown)
