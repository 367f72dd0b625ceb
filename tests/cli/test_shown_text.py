"""Every printer shows untrusted text through the one sanitiser: `runs list|show` (tables and plain), JSON, the
HTML page, `diagnose` in every format (also a zip member of binary bytes), streamed `ask` output, errors that
echo their input. Hostile text goes in; no character that acts on a terminal comes out, and a terminal
emulator shows the text that was hidden."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pyte
import pytest

from repopilot.ci import DiagnosisReport
from repopilot.ci.render import render_github, render_json, render_markdown
from repopilot.cli import ask as ask_cli
from repopilot.cli import runs as runs_cli
from repopilot.cli.main import main
from repopilot.cli.render import render_text
from repopilot.cli.rich_console import SanitisingConsole as _Console
from repopilot.core import TraceRecorder
from repopilot.core.sanitize import UNSAFE

ESC = "\x1b"
# Erase the line and go back to column 1; set the title; put text on the clipboard; make a link; reverse text.
HOSTILE = (f"SECRET-PLAN{ESC}[2K{ESC}[1G{ESC}]0;title{chr(7)}{ESC}]52;c;ZXZpbA=={chr(7)}"
           f"{ESC}]8;;https://evil.example{ESC}\\link{ESC}]8;;{ESC}\\ \u202eesrever\u202c \x9b2J \x7f[bold]x[/bold]")


def _clean(text: str) -> None:
    assert UNSAFE.search(text) is None, repr(UNSAFE.search(text))


def _on_screen(text: str) -> str:
    screen = pyte.Screen(400, 300)
    screen.set_mode(pyte.modes.LNM)
    stream = pyte.Stream(screen)
    stream.feed(text)
    assert screen.title == ""
    return "\n".join(line.rstrip() for line in screen.display)


@pytest.fixture
def hostile_run() -> str:
    rec = TraceRecorder.start("ask", f"goal {HOSTILE}", run_id="20250101-000000-bbbbbb")
    rec.step("llm_call", model=f"model {HOSTILE}", input_tokens=1, output_tokens=1, cost=0.0,
             result={"text": HOSTILE, "tool_calls": [{"id": "c1", "name": "read_file", "arguments": {}}]})
    rec.step("tool_result", tool_name="read_file", tool_call_id="c1", result=f"file {HOSTILE}")
    rec.step("decision", result=HOSTILE, detail={"decision": f"d {HOSTILE}"})
    rec.finish("completed", answer=f"answer {HOSTILE}")
    return rec.trace.run_id


@pytest.mark.parametrize("terminal", [False, True])
def test_runs_list_and_show(hostile_run: str, terminal: bool, monkeypatch: pytest.MonkeyPatch,
                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(runs_cli, "stdout_is_terminal", lambda: terminal)
    monkeypatch.setattr(runs_cli.out, "width", 400)
    for argv in (["runs", "list"], ["runs", "show", hostile_run]):
        assert main(argv) == 0
        text = capsys.readouterr().out
        _clean(text)
        assert "SECRET-PLAN␛[2K␛[1G" in _on_screen(text)
    assert "answer SECRET-PLAN␛[2K␛[1G␛]0;title␇" in text and "⟨U+202E⟩esrever" in text
    assert "[bold]x[/bold]" in text  # untrusted markup is shown as text, not applied


def test_json_outputs_keep_the_data_and_lose_the_controls(hostile_run: str,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["runs", "show", hostile_run, "--json"]) == 0
    text = capsys.readouterr().out
    _clean(text)
    assert json.loads(text)["answer"] == f"answer {HOSTILE}"
    assert main(["runs", "list", "--json"]) == 0
    text = capsys.readouterr().out
    _clean(text)
    assert json.loads(text)[0]["goal"] == f"goal {HOSTILE}"


def test_the_html_page(hostile_run: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "export", hostile_run, "--html", "-"]) == 0
    page = capsys.readouterr().out
    _clean(page)
    assert "answer SECRET-PLAN␛[2K" in page and "⟨U+202E⟩esrever" in page


def _report(text: str) -> DiagnosisReport:
    line = {"line": 3, "text": text}
    return DiagnosisReport.model_validate({
        "log": f"job {HOSTILE}", "category": "build", "decided_by": "rules", "error_lines": [3],
        "failing_step": {"name": f"step {HOSTILE}", "line": 1, "exit_code": 1},
        "excerpt": {"text": f"header\n{text}", "tokens": 5, "ranges": [[3, 3]]},
        "failures": [{"rule": "x.y", "category": "build", "confidence": 0.9, "message": f"msg {text}",
                      "file": f"src/{HOSTILE}.go", "line": 3, "lines": [line], "causal": True,
                      "hint": f"hint {text}"}]})


def test_diagnosis_renderers_text_markdown_annotations_json() -> None:
    report = _report(HOSTILE)
    console = _Console(file=io.StringIO(), force_terminal=True, color_system="standard", width=400)
    shown = render_text([report], console=console)
    assert "SECRET-PLAN␛[2K␛[1G" in _on_screen(shown)
    assert "]52;" not in shown.replace("␛]52;", "")  # no raw OSC 52 left for the terminal to act on
    for text in (render_markdown([report]), render_github([report])):
        _clean(text)
        assert "SECRET-PLAN␛[2K␛[1G" in text and "⟨U+202E⟩esrever" in text
    data = render_json([report])
    _clean(data)
    assert json.loads(data)["failures"][0]["message"] == f"msg {HOSTILE}"


def test_diagnose_a_zip_with_a_binary_member(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 15 item 6: a zip member of binary bytes was printed raw."""
    bundle = tmp_path / "logs.zip"
    with zipfile.ZipFile(bundle, "w") as z:
        z.writestr("build/1_step.txt", bytes(range(256)) * 4 + b"\nerror: " + HOSTILE.encode() + b" failed\n")
        z.writestr(f"{ESC}]0;t{chr(7)}evil/2_x.txt", b"Error: \xe2\x80\xae reversed\n")
    for fmt in ("text", "markdown", "github", "json"):
        assert main(["diagnose", str(bundle), "--format", fmt]) == 0
        out, err = capsys.readouterr()
        _clean(out)
        _clean(err)
        if fmt == "json":
            assert any("SECRET-PLAN" in json.dumps(r) for r in json.loads(out))
        elif fmt == "github":  # no rule matched: the annotation names the member, shown
            assert "␛]0;t␇evil" in out
        else:  # log lines lose their ANSI sequences when read; the C1 CSI and bidi are shown
            assert "SECRET-PLAN" in out and "⟨U+009B⟩2J" in out and "⟨U+202E⟩esrever" in out


def test_streamed_ask_output(monkeypatch: pytest.MonkeyPatch) -> None:
    buffer = io.StringIO()
    monkeypatch.setattr(ask_cli.out, "_file", buffer)  # restored to None: the console follows sys.stdout again
    printer = ask_cli._StreamPrinter()
    for fragment in ("before ", f"{ESC}[2", "K", f"{ESC}]52;c;eA=={chr(7)} after"):
        printer.write(fragment)
    printer.end_line()  # the end of the model's turn (text is held back until then, or until whitespace)
    _clean(buffer.getvalue())
    assert buffer.getvalue() == "before ␛[2K␛]52;c;eA==␇ after\n"


def test_errors_that_echo_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["runs", "show", f"x{ESC}]0;t{chr(7)}"]) == 2
    _clean(capsys.readouterr().err)
    name = tmp_path / f"no{ESC}[2Jsuch\u202e.log"
    assert main(["diagnose", str(name)]) == 2
    err = capsys.readouterr().err
    _clean(err)
    assert "no␛[2Jsuch" in err or "\\x1b" in err


@pytest.mark.parametrize("argv", [["diagnose", "--format", f"x{ESC}]0;t{chr(7)}\u202ey"],
                                  [f"no{ESC}[2Jsuch\u202ecommand"]])
def test_usage_errors_that_echo_input(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    _clean(captured.out + captured.err)
    assert "Error" in captured.err
