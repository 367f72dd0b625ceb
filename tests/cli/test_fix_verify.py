"""The receipt where a person reads it: above the y/N question of `fix`, in `runs show`, and the guard's hits when
a weakening was refused."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from repopilot.cli import fix as fix_cli
from repopilot.cli.main import main
from tests.app.test_verify import PYTEST, SKIP, _propose
from tests.cli.test_fix import LOG, READ, Script


def _fix(git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, replies: list[object],
         *flags: str) -> int:
    from repopilot.providers import PROVIDERS, ProviderInfo, ScriptedModel

    script = Script(replies)
    monkeypatch.setitem(PROVIDERS, "test", ProviderInfo(name="test", factory=lambda m, env: ScriptedModel(script)))
    monkeypatch.setenv("REPOPILOT_MODEL", "test:script")
    monkeypatch.setenv("REPOPILOT_VERIFY", "1")
    log = tmp_path / "ci.log"
    log.write_text(LOG)
    return main(["fix", str(log), "--repo", str(git_repo), "--no-llm-diagnosis", "--verify-cmd", PYTEST, *flags])


def test_the_receipt_is_shown_above_the_question_and_by_runs_show(git_repo: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from tests.cli.test_fix import FIX

    monkeypatch.setattr(fix_cli, "_stdin_is_terminal", lambda: True)
    monkeypatch.setattr(sys, "stdin", io.StringIO("n\n"))
    assert _fix(git_repo, tmp_path, monkeypatch, [READ, _propose("p1", FIX)]) == 0
    out = capsys.readouterr().out
    receipt_at, question_at = out.index("Verification: VERIFIED"), out.index("Apply this diff")
    assert receipt_at < question_at
    assert "on HEAD" in out and "exit 1" in out and "with the diff: exit 0" in out
    assert "guard: no weakening found" in out and f"command: {PYTEST}" in out
    assert main(["runs", "show", "latest"]) == 0
    shown = capsys.readouterr().out
    assert "verification" in shown and "Verification: VERIFIED" in shown and "from: flag --verify-cmd" in shown
    page = tmp_path / "run.html"
    assert main(["trace", "export", "latest", "--html", str(page)]) == 0
    html = page.read_text()
    assert 'id="verification"' in html and "Verification: VERIFIED" in html and "guard: no weakening found" in html


def test_the_receipt_goes_to_the_job_summary(git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    from tests.cli.test_fix import FIX

    monkeypatch.setattr(fix_cli, "_stdin_is_terminal", lambda: False)
    summary = tmp_path / "summary.md"
    assert _fix(git_repo, tmp_path, monkeypatch, [_propose("p1", FIX)], "--summary-file", str(summary)) == 3
    text = summary.read_text()
    assert "## RepoPilot fix run" in text and "awaiting_approval" in text
    assert "```text\nVerification: VERIFIED" in text and "with the diff: exit 0" in text


def test_a_refused_weakening_is_shown(git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(fix_cli, "_stdin_is_terminal", lambda: False)
    code = _fix(git_repo, tmp_path, monkeypatch, [_propose("p1", SKIP), _propose("p2", SKIP), _propose("p3", SKIP)])
    err = capsys.readouterr().err
    assert code != 0 and "Proposal refused" in err and "BLOCKED" in err and "skip_added" in err


def test_the_set_up_cache_is_shown_and_can_be_turned_off(git_repo: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    from tests.cli.test_fix import FIX

    monkeypatch.setattr(fix_cli, "_stdin_is_terminal", lambda: False)
    setup = ("--verify-setup", "mkdir -p .deps && touch .deps/ok")
    assert _fix(git_repo, tmp_path, monkeypatch, [_propose("p1", FIX)], *setup) == 3
    out = capsys.readouterr().out
    assert "set-up: cache miss" in out and "kept (1 path" in out and "set-up: cache hit" in out
    assert _fix(git_repo, tmp_path, monkeypatch, [_propose("p1", FIX)], *setup, "--no-setup-cache") == 3
    out = capsys.readouterr().out
    assert out.count("set-up: ran (exit 0)") == 2 and "caching off" in out and "cache hit" not in out
