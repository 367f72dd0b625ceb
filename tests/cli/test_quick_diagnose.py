"""The quick path of `repopilot diagnose` (cli/diagnose_run.py): it reads the same options as the typer command,
gives the same output, and leaves to typer everything it does not know for sure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer.main

from repopilot.cli import diagnose_run
from repopilot.cli.app import build_app
from repopilot.cli.main import main
from repopilot.cli.render import Format

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ci"
LOG = str(FIXTURES / "go-mod-fail.log")


def test_it_reads_exactly_the_options_the_typer_command_declares() -> None:
    group = typer.main.get_command(build_app("diagnose"))
    command = group.commands["diagnose"]  # type: ignore[attr-defined]
    flags = {o for p in command.params if getattr(p, "is_flag", False) for o in p.opts}
    values = {o for p in command.params if getattr(p, "is_flag", None) is False for o in p.opts}
    assert flags == set(diagnose_run.QUICK_FLAGS) and values == set(diagnose_run.QUICK_VALUES)
    names = {p.name for p in command.params} - {"source"}
    assert names == set(diagnose_run.QUICK_FLAGS.values()) | set(diagnose_run.QUICK_VALUES.values())


@pytest.mark.parametrize(("argv", "expected"), [
    (["diagnose", "a.log"], {"source": "a.log"}),
    (["--debug", "diagnose", "-", "-f", "json"], {"source": "-", "fmt": Format.json, "debug": True}),
    (["diagnose", "--format=markdown", "--no-llm", "a.log", "-v", "--token-budget", "300", "--baseline", "b.log"],
     {"source": "a.log", "fmt": Format.markdown, "no_llm": True, "verbose": True, "token_budget": 300,
      "baseline": "b.log"}),
    (["diagnose", "a.log", "-q"], {"source": "a.log", "quiet": True}),
])
def test_the_common_case_is_read(argv: list[str], expected: dict[str, object]) -> None:
    assert diagnose_run.quick_arguments(argv) == {"debug": False, "fmt": Format.text, **expected}


@pytest.mark.parametrize("argv", [
    ["diagnose"], ["diagnose", "--help"], ["diagnose", "a.log", "b.log"], ["diagnose", "a.log", "-f", "yaml"],
    ["diagnose", "a.log", "--token-budget", "99"], ["diagnose", "a.log", "--token-budget", "x"],
    ["diagnose", "a.log", "-fjson"], ["diagnose", "--", "a.log"], ["diagnose", "a.log", "--no-llm", "--no-llm"],
    ["diagnose", "a.log", "--baseline", "--no-llm"], ["diagnose", "a.log", "--debug"], ["diagnose", "a.log", "-f"],
    ["--version", "diagnose", "a.log"], ["runs"], [], ["diagnose", "a.log", "--no-llm=1"], ["diagnose", "--example"],
])
def test_anything_else_goes_to_typer(argv: list[str]) -> None:
    assert diagnose_run.quick_arguments(argv) is None


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv", [
    ["diagnose", LOG, "--format", "json", "--no-llm"],
    ["diagnose", LOG, "-v"],
    ["diagnose", LOG, "-f", "github", "--token-budget", "200", "--quiet"],
    ["diagnose", str(FIXTURES / "no-such.log"), "-f", "json"],
    ["diagnose", LOG, "--example"],
])
def test_the_quick_path_prints_what_typer_prints(argv: list[str], capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    quick = _run(argv, capsys)
    monkeypatch.setattr(diagnose_run, "quick_arguments", lambda args: None)
    typed = _run(argv, capsys)
    if "json" in argv:  # each run has its own trace; the first fills the cache the second scans with
        quick, typed = (_without_trace_id(r) for r in (quick, typed))
    assert quick[0] == typed[0] and quick[1] == typed[1]
    assert _stable(quick[2]) == _stable(typed[2])


def _stable(err: str) -> list[str]:
    # The summary names each run's own id, duration and trace.
    return [line for line in err.splitlines() if not line.startswith(("run ", "──── run summary"))
            and not line.lstrip().startswith(("run ", "duration ", "trace "))]


def _without_trace_id(result: tuple[int, str, str]) -> tuple[int, str, str]:
    code, out, err = result
    if not out:
        return result
    report = json.loads(out)
    report.pop("trace_run_id", None)
    report.pop("engine", None)
    return code, json.dumps(report), err


# Not a value ending in a backslash: rich's `escape` doubles it (`C:\logs\` shows as `C:\logs\\`); the plain
# path prints the value as it is.
TRICKY = ["plain", "a\tb\tc", "[bold]x[/bold] [link=http://e.test]y[/link]", "back\\slash\\ here", ":smile: ünï 日本語",
          "line\nbreak", "\x1b]0;title\x07 \x1b[2K\r", "  lead and trail  ", "x" * 300, "\u202eevil\u200b", "\\[dim]"]


def test_the_plain_summary_is_what_rich_prints_on_a_pipe(capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from repopilot.cli import summary

    monkeypatch.setattr(summary, "summary_lines", lambda trace, path: [(f"k{i}", v) for i, v in enumerate(TRICKY)])
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    summary.print_summary(None, Path("t.json"))  # type: ignore[arg-type]
    plain = capsys.readouterr().err
    monkeypatch.setattr(summary, "plain_stderr", lambda: False)
    summary.print_summary(None, Path("t.json"))  # type: ignore[arg-type]
    assert plain == capsys.readouterr().err
    assert plain.count("\n") == len(TRICKY) + 1 and "\x1b" not in plain


def test_the_plain_summary_line_is_what_rich_prints_on_a_pipe(capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from repopilot.cli import summary

    monkeypatch.setattr(summary, "summary_line", lambda trace: "run x\t· [bold]y[/bold] · \x1b[2K·")
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    summary.print_summary_line(None)  # type: ignore[arg-type]
    plain = capsys.readouterr().err
    monkeypatch.setattr(summary, "plain_stderr", lambda: False)
    summary.print_summary_line(None)  # type: ignore[arg-type]
    assert plain == capsys.readouterr().err and "[bold]" in plain and "\x1b" not in plain


def test_force_color_is_left_to_rich(monkeypatch: pytest.MonkeyPatch) -> None:
    from repopilot.cli.console import plain_stderr

    monkeypatch.setattr("sys.stderr.isatty", lambda: False, raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    assert plain_stderr()
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert not plain_stderr()


def test_a_deferred_console_serves_rich_live_displays() -> None:
    import io

    from rich.progress import Progress

    from repopilot.cli.console import _Deferred

    buffer = io.StringIO()
    console = _Deferred(file=buffer, force_terminal=True, width=80, highlight=False)
    with Progress(console=console, transient=True) as bar:  # type: ignore[arg-type]
        task = bar.add_task("scanning \x1b]0;title\x07", total=10)
        bar.update(task, completed=10)
    with console.status("waiting"):  # type: ignore[attr-defined]
        console.print("inside \x1b[2K", markup=False)  # type: ignore[attr-defined]
    written = buffer.getvalue()
    assert "inside ␛[2K" in written and "\x1b]0;" not in written


@pytest.mark.parametrize("argv", [["diagnose", "a.log", "--branch", "main"], ["diagnose", "a.log", "-w", "ci.yml"],
                                  ["diagnose", "a.log", "--run=7"]])
def test_the_options_that_choose_a_run_are_left_to_typer(argv: list[str]) -> None:
    assert diagnose_run.quick_arguments(argv) is None
