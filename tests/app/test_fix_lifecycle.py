"""The fix-run lifecycle from Python, without a terminal: start a run, read its outcome, approve or reject it.
Nothing here prints, prompts or reads stdin; a webhook or a library caller drives runs the same way."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from repopilot.app import approve_run, load_settings, reject_run, resume_run, start_fix
from repopilot.core import ApprovalError, load_trace
from tests.cli.test_fix import LOG

FIX = """--- a/src/calc.py
+++ b/src/calc.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b
"""


class _NoTerminal(io.StringIO):
    def read(self, *args: object) -> str:
        raise AssertionError("the application layer must not read stdin")

    readline = read  # type: ignore[assignment]

    def isatty(self) -> bool:
        return False


def _start(git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, call_id: str = "p1") -> str:
    script = tmp_path / f"script-{call_id}.json"
    script.write_text(json.dumps([
        {"content": "", "tool_calls": [{"id": "r1", "name": "read_file", "arguments": {"path": "src/calc.py"}}]},
        {"content": "", "tool_calls": [{"id": call_id, "name": "propose_fix",
                                        "arguments": {"diff": FIX, "explanation": "add must add"}}]},
    ]))
    log = tmp_path / "ci.log"
    log.write_text(LOG)
    monkeypatch.setattr(sys, "stdin", _NoTerminal())
    settings = load_settings({"REPOPILOT_MODEL": f"scripted:{script}"}, tmp_path)
    seen: list[int] = []
    done = start_fix(str(log), settings, repo=git_repo, no_llm_diagnosis=True,
                     on_diagnosis=lambda reports: seen.append(len(reports)))
    assert seen == [1] and done.reports[0].category == "test"
    assert done.trace.status == "awaiting_approval"
    assert done.proposal is not None and done.proposal.diff == FIX
    return done.trace.run_id


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


def test_start_then_approve_from_python(git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    run_id = _start(git_repo, tmp_path, monkeypatch)
    proposal = load_trace(run_id).proposal
    assert proposal is not None
    with pytest.raises(ApprovalError, match="sha256 mismatch"):
        approve_run(run_id, sha256="0" * 64, who="webhook")
    done = approve_run(run_id, sha256=proposal["sha256"], who="webhook")
    assert done.applied is not None and done.applied.branch == f"repopilot/{run_id}"
    assert done.proposal.decision == "approved" and done.proposal.decided_by == "webhook"
    assert "return a + b" in _git(git_repo, "show", f"repopilot/{run_id}:src/calc.py")
    assert "return a - b" in (git_repo / "src" / "calc.py").read_text()  # the working tree is untouched
    assert approve_run(run_id, sha256=proposal["sha256"]).already  # twice is a no-op
    assert load_trace(run_id).status == "approved"
    assert capsys.readouterr().out == ""  # the application layer printed nothing


def test_start_then_reject_then_resume_from_python(git_repo: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    run_id = _start(git_repo, tmp_path, monkeypatch)
    done = reject_run(run_id, reason="not like this", who="reviewer")
    assert not done.already and done.proposal.decision == "rejected" and done.proposal.reason == "not like this"
    assert reject_run(run_id).already
    assert load_trace(run_id).status == "rejected"
    with pytest.raises(ApprovalError, match="was rejected"):
        approve_run(run_id)
    # Resumed, the model hears why; here its script has nothing more to say, so the run ends without a fix.
    resumed = resume_run(run_id, load_settings({"REPOPILOT_MODEL": "scripted:demo"}, tmp_path))
    assert resumed.trace.run_id == run_id and resumed.proposal is None
