"""`fix`, `approve`, `reject`, `resume` through the CLI entry point, with a scripted model."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from repopilot.app import fix_runs
from repopilot.ci import DiagnosisReport
from repopilot.cli import fix as fix_cli
from repopilot.cli.main import main
from repopilot.core import AssistantMessage, Message, ToolSpec, diff_sha256, load_trace, read_trace, runs_dir
from repopilot.providers import PROVIDERS, ProviderInfo, ScriptedModel

FIX = """--- a/src/calc.py
+++ b/src/calc.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b
"""
EXPLANATION = "add() subtracts its arguments; make it add.\n\nThe failing test expects add(2, 3) == 5."
LOG = "\n".join([
    "2026-12-01T10:00:00.0000000Z ##[group]Run python -m pytest -q",
    "2026-12-01T10:00:00.1000000Z python -m pytest -q",
    "2026-12-01T10:00:00.2000000Z ##[endgroup]",
    "2026-12-01T10:00:01.0000000Z F                                                                        [100%]",
    "2026-12-01T10:00:01.1000000Z =================================== FAILURES ===================================",
    "2026-12-01T10:00:01.2000000Z ___________________________________ test_add ___________________________________",
    "2026-12-01T10:00:01.3000000Z ",
    "2026-12-01T10:00:01.4000000Z     def test_add():",
    "2026-12-01T10:00:01.5000000Z >       assert add(2, 3) == 5",
    "2026-12-01T10:00:01.6000000Z E       assert -1 == 5",
    "2026-12-01T10:00:01.7000000Z E        +  where -1 = add(2, 3)",
    "2026-12-01T10:00:01.8000000Z ",
    "2026-12-01T10:00:01.9000000Z tests/test_calc.py:5: AssertionError",
    "2026-12-01T10:00:02.0000000Z =========================== short test summary info ============================",
    "2026-12-01T10:00:02.1000000Z FAILED tests/test_calc.py::test_add - assert -1 == 5",
    "2026-12-01T10:00:02.2000000Z 1 failed in 0.03s",
    "2026-12-01T10:00:02.3000000Z ##[error]Process completed with exit code 1.",
]) + "\n"

READ = {"content": "Reading the code under test.",
        "tool_calls": [{"id": "t1", "name": "read_file", "arguments": {"path": "src/calc.py"}}]}
PROPOSE = {"content": "", "tool_calls": [{"id": "t2", "name": "propose_fix",
                                          "arguments": {"diff": FIX, "explanation": EXPLANATION}}]}
FINAL = "Fixed: add() now adds. Verify with `python -m pytest tests/test_calc.py`."


class Script:
    """Replies chosen by how many assistant turns the conversation already has, so a resumed run gets the
    next reply; every call is logged to check that no answered turn is asked again."""

    def __init__(self, replies: Sequence[Any]) -> None:
        self.replies = list(replies)
        self.turns: list[int] = []
        self.seen: list[list[Message]] = []

    def __call__(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> Any:
        turn = sum(isinstance(m, AssistantMessage) for m in messages)
        self.turns.append(turn)
        self.seen.append(list(messages))
        return self.replies[turn]


@pytest.fixture
def script(monkeypatch: pytest.MonkeyPatch) -> Script:
    s = Script([READ, PROPOSE, FINAL])
    monkeypatch.setitem(PROVIDERS, "test", ProviderInfo(name="test", factory=lambda m, env: ScriptedModel(s)))
    monkeypatch.setenv("REPOPILOT_MODEL", "test:script")
    monkeypatch.setattr(fix_cli, "_stdin_is_terminal", lambda: False)
    return s


@pytest.fixture
def log(tmp_path: Path) -> Path:
    p = tmp_path / "ci.log"
    p.write_text(LOG)
    return p


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def _state(root: Path) -> tuple[str, str, str, str]:
    return (_git(root, "rev-parse", "HEAD"), _git(root, "status", "--porcelain"),
            (root / "src" / "calc.py").read_text(), _git(root, "branch", "--list"))


def _run_id(runs: Path) -> str:
    (path,) = runs.glob("*.json")
    return path.stem


def _fix_awaiting(git_repo: Path, log: Path, capsys: pytest.CaptureFixture[str], runs: Path) -> str:
    code = main(["fix", str(log), "--repo", str(git_repo), "--no-llm-diagnosis"])
    assert code == 3
    return _run_id(runs)


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    return tmp_path / "runs"


def test_no_terminal_fails_closed(git_repo: Path, log: Path, script: Script, runs: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    before = _state(git_repo)
    code = main(["fix", str(log), "--repo", str(git_repo), "--no-llm-diagnosis"])
    captured = capsys.readouterr()
    assert code == 3
    assert _state(git_repo) == before  # nothing applied, no branch
    run_id = _run_id(runs)
    sha = diff_sha256(FIX)
    assert f"repopilot approve {run_id} --repo {git_repo} --sha256 {sha}" in captured.err
    assert f"sha256: {sha}" in captured.out
    assert "+    return a + b" in captured.out and EXPLANATION.splitlines()[0] in captured.out
    assert "ci.log: test (decided by rules" in captured.out  # the diagnosis is shown
    t = load_trace(run_id)
    assert t.status == "awaiting_approval" and t.diagnosis is not None
    # The model saw the excerpt with the failing assertion, not more than the excerpt.
    first = script.seen[0][1].content
    assert "assert -1 == 5" in first


def test_approve_applies_once_and_records_who_when_sha(git_repo: Path, log: Path, script: Script, runs: Path,
                                                       capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    run_id = _fix_awaiting(git_repo, log, capsys, runs)
    before = _state(git_repo)
    monkeypatch.setenv("USER", "alice")
    capsys.readouterr()
    assert main(["approve", run_id, "--sha256", diff_sha256(FIX)]) == 0
    assert f"repopilot/{run_id}" in capsys.readouterr().out
    head, status, calc, _ = _state(git_repo)
    assert (head, status, calc) == before[:3]
    assert _git(git_repo, "show", f"repopilot/{run_id}:src/calc.py").endswith("return a + b\n")
    t = load_trace(run_id)
    assert t.status == "approved"
    (step,) = [s for s in t.steps if s.type == "approval"]
    assert step.detail["who"] == "alice" and step.detail["decision"] == "approved"
    assert step.detail["sha256"] == diff_sha256(FIX) and step.detail["when"]
    # Approving again is a no-op that says so.
    assert main(["approve", run_id]) == 0
    assert "already approved" in capsys.readouterr().out
    assert [s.type for s in load_trace(run_id).steps].count("approval") == 1


def test_sha_mismatch_is_refused(git_repo: Path, log: Path, script: Script, runs: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    run_id = _fix_awaiting(git_repo, log, capsys, runs)
    code = main(["approve", run_id, "--sha256", "0" * 64])
    assert code == 2
    assert "sha256 mismatch" in capsys.readouterr().err
    assert f"repopilot/{run_id}" not in _git(git_repo, "branch")
    assert load_trace(run_id).status == "awaiting_approval"


@pytest.mark.parametrize(("alter", "needle"), [
    (lambda p: p.update(diff=p["diff"].replace("a + b", "a * b")), "altered"),
    (lambda p: p.update(diff=p["diff"].replace("a + b", "a * b"),
                        sha256=diff_sha256(p["diff"].replace("a + b", "a * b"))), "does not match the step"),
    (lambda p: p.clear(), "unparseable"),
])
def test_altered_proposal_is_refused(git_repo: Path, log: Path, script: Script, runs: Path, alter: Any,
                                     needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    run_id = _fix_awaiting(git_repo, log, capsys, runs)
    path = runs / f"{run_id}.json"
    data = read_trace(path).model_dump(mode="json")
    alter(data["proposal"])
    path.write_text(json.dumps(data))
    capsys.readouterr()
    assert main(["approve", run_id]) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err
    assert f"repopilot/{run_id}" not in _git(git_repo, "branch")


def test_missing_proposal_or_run_is_refused(git_repo: Path, capsys: pytest.CaptureFixture[str],
                                            runs: Path) -> None:
    assert main(["approve", "20260101-000000-abcdef"]) == 2
    assert "no run" in capsys.readouterr().err
    from repopilot.core import TraceRecorder
    rec = TraceRecorder.start("fix", "x", repo=str(git_repo))
    assert main(["approve", rec.trace.run_id]) == 2
    assert "no proposal" in capsys.readouterr().err


def test_yes_approves_without_asking(git_repo: Path, log: Path, script: Script, runs: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fix", str(log), "--repo", str(git_repo), "--no-llm-diagnosis", "--yes"]) == 0
    run_id = _run_id(runs)
    assert f"repopilot/{run_id}" in _git(git_repo, "branch")
    t = load_trace(run_id)
    assert t.status == "approved"
    assert next(s for s in t.steps if s.type == "approval").detail["who"].endswith("(--yes)")


@pytest.mark.parametrize(("answer", "applied"), [("y\n", True), ("\n", False), ("n\n", False)])
def test_terminal_prompt_defaults_to_no(git_repo: Path, log: Path, script: Script, runs: Path,
                                        monkeypatch: pytest.MonkeyPatch, answer: str, applied: bool) -> None:
    monkeypatch.setattr(fix_cli, "_stdin_is_terminal", lambda: True)
    monkeypatch.setattr(sys, "stdin", io.StringIO(answer))
    assert main(["fix", str(log), "--repo", str(git_repo), "--no-llm-diagnosis"]) == 0
    run_id = _run_id(runs)
    assert (f"repopilot/{run_id}" in _git(git_repo, "branch")) is applied
    assert load_trace(run_id).status == ("approved" if applied else "rejected")


def test_reject_then_approve_is_refused(git_repo: Path, log: Path, script: Script, runs: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    run_id = _fix_awaiting(git_repo, log, capsys, runs)
    assert main(["reject", run_id, "--reason", "prefer fixing the test"]) == 0
    t = load_trace(run_id)
    assert t.status == "rejected"
    (step,) = [s for s in t.steps if s.type == "approval"]
    assert step.detail["decision"] == "rejected" and step.detail["reason"] == "prefer fixing the test"
    assert main(["reject", run_id]) == 0
    assert "already rejected" in capsys.readouterr().out
    assert main(["approve", run_id]) == 2
    assert f"repopilot/{run_id}" not in _git(git_repo, "branch")


def test_resume_after_reject_tells_the_model_the_reason(git_repo: Path, log: Path, script: Script, runs: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    run_id = _fix_awaiting(git_repo, log, capsys, runs)
    main(["reject", run_id, "--reason", "use sum()"])
    script.replies[2] = "I cannot find a better fix than the one you rejected."
    assert main(["resume", run_id]) == 0
    told = script.seen[-1][-1]
    assert "rejected" in told.content and "use sum()" in told.content
    assert load_trace(run_id).status == "completed"


def test_resume_after_approval_reaches_a_final_answer(git_repo: Path, log: Path, script: Script, runs: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    run_id = _fix_awaiting(git_repo, log, capsys, runs)
    assert main(["approve", run_id, "--sha256", diff_sha256(FIX)]) == 0
    capsys.readouterr()
    assert main(["resume", run_id]) == 0
    assert FINAL in capsys.readouterr().out
    assert script.turns == [0, 1, 2]  # no model turn asked twice
    t = load_trace(run_id)
    assert t.status == "completed" and t.answer == FINAL
    assert "approved" in script.seen[-1][-1].content
    assert main(["resume", run_id]) == 2  # finished runs are not resumed


def test_resume_while_awaiting_approval_asks_no_model(git_repo: Path, log: Path, script: Script, runs: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    run_id = _fix_awaiting(git_repo, log, capsys, runs)
    assert main(["resume", run_id]) == 3
    assert script.turns == [0, 1]
    assert main(["resume", run_id, "--yes"]) == 0
    assert load_trace(run_id).status == "approved"


def test_ctrl_c_marks_interrupted_and_resume_continues(git_repo: Path, log: Path, script: Script, runs: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    script.replies[1] = KeyboardInterrupt()
    assert main(["fix", str(log), "--repo", str(git_repo), "--no-llm-diagnosis"]) == 5
    run_id = _run_id(runs)
    assert load_trace(run_id).status == "interrupted"
    script.replies[1] = PROPOSE
    assert main(["resume", run_id]) == 3
    assert script.turns == [0, 1, 1]  # turn 1 was never answered, so it is asked again; turn 0 is not
    assert len([s for s in load_trace(run_id).steps if s.tool_name == "read_file" and s.type == "tool_result"]) == 1


def test_three_invalid_proposals_stop_the_run(git_repo: Path, log: Path, script: Script, runs: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    bad = {"content": "", "tool_calls": [{"name": "propose_fix", "arguments": {"diff": "nope", "explanation": "x"}}]}
    script.replies[:] = [bad, bad, bad, FINAL]
    before = _state(git_repo)
    assert main(["fix", str(log), "--repo", str(git_repo), "--no-llm-diagnosis"]) == 4
    assert "invalid_proposals" in capsys.readouterr().err
    assert load_trace(_run_id(runs)).status == "failed:invalid_proposals"
    assert _state(git_repo) == before


def test_bad_input_is_one_line_exit_2(git_repo: Path, tmp_path: Path, script: Script,
                                      capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    assert main(["fix", str(tmp_path / "missing.log"), "--repo", str(git_repo), "--no-llm-diagnosis"]) == 2
    assert "no such" in capsys.readouterr().err
    empty = tmp_path / "empty.log"
    empty.write_text("")
    assert main(["fix", str(empty), "--repo", str(git_repo), "--no-llm-diagnosis"]) == 2
    assert "empty" in capsys.readouterr().err
    assert main(["fix", str(empty), "--repo", str(tmp_path / "nowhere"), "--no-llm-diagnosis"]) == 2
    monkeypatch.delenv("REPOPILOT_MODEL")
    assert main(["fix", str(empty), "--repo", str(git_repo), "--no-llm-diagnosis"]) == 2
    err = capsys.readouterr().err
    assert "no model configured" in err and "Traceback" not in err


def test_end_to_end_fix_approve_and_the_test_passes_on_the_branch(
        git_repo: Path, log: Path, script: Script, runs: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    def pytest_in(where: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_calc.py"],
                              cwd=where, capture_output=True, text=True, check=False)

    assert pytest_in(git_repo).returncode == 1  # the failure is real before the fix
    before = _state(git_repo)
    run_id = _fix_awaiting(git_repo, log, capsys, runs)
    assert main(["approve", run_id, "--repo", str(git_repo), "--sha256", diff_sha256(FIX)]) == 0
    checkout = tmp_path / "checkout"
    _git(git_repo, "worktree", "add", "-q", str(checkout), f"repopilot/{run_id}")
    result = pytest_in(checkout)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout
    _git(git_repo, "worktree", "remove", "--force", str(checkout))
    assert _state(git_repo)[:3] == before[:3]  # the original branch, index and files are untouched
    assert _git(git_repo, "rev-list", "--count", f"main..repopilot/{run_id}").strip() == "1"


def test_no_answer_at_the_prompt_fails_closed(git_repo: Path, log: Path, script: Script, runs: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fix_cli, "_stdin_is_terminal", lambda: True)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # end of input, as with Ctrl-D
    assert main(["fix", str(log), "--repo", str(git_repo), "--no-llm-diagnosis"]) == 3
    run_id = _run_id(runs)
    assert load_trace(run_id).status == "awaiting_approval"
    assert f"repopilot/{run_id}" not in _git(git_repo, "branch")


def test_no_proposal_is_an_answer(git_repo: Path, log: Path, script: Script, runs: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    script.replies[:] = ["The runner ran out of disk; nothing in the repository to change."]
    assert main(["fix", str(log), "--repo", str(git_repo), "--no-llm-diagnosis"]) == 0
    out = capsys.readouterr().out
    assert "ran out of disk" in out and "No fix was proposed" in out
    assert load_trace(_run_id(runs)).status == "completed"


def test_secrets_in_the_log_never_reach_the_model_or_trace(git_repo: Path, tmp_path: Path, script: Script,
                                                           runs: Path) -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    leaky = tmp_path / "leaky.log"
    leaky.write_text(LOG.replace("1 failed in 0.03s", f"curl -H 'Authorization: token {token}' failed"))
    main(["fix", str(leaky), "--repo", str(git_repo), "--no-llm-diagnosis"])
    assert token not in script.seen[0][1].content
    assert token not in (runs / f"{_run_id(runs)}.json").read_text()


def test_resume_an_interrupted_ask_run(git_repo: Path, script: Script, runs: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    script.replies[:] = [READ, KeyboardInterrupt()]
    assert main(["ask", "what does add do?", "--repo", str(git_repo)]) == 5
    script.replies[1] = "It adds (badly)."
    assert main(["resume", _run_id(runs)]) == 0
    assert "It adds (badly)." in capsys.readouterr().out
    assert script.turns == [0, 1, 1]


def test_the_seed_is_built_from_the_diagnosis_contract(git_repo: Path, log: Path, script: Script,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    got: list[dict[str, Any]] = []
    report = {"category": "test", "decided_by": "rules", "error_lines": [10], "source": str(log), "run_id": None,
              "failures": [{"rule": "pytest-failure", "category": "test", "confidence": 0.95,
                            "message": "assert -1 == 5", "file": "tests/test_calc.py", "line": 5,
                            "hint": "the code under test returns the wrong value",
                            "lines": [{"line": 10, "text": "E       assert -1 == 5"}]}],
              "excerpt": {"ranges": [[8, 13]], "tokens": 20, "text": "    10 | E       assert -1 == 5"}}

    def fake(source: str, **kwargs: Any) -> list[DiagnosisReport]:
        got.append({"source": source, **kwargs})
        return [DiagnosisReport.model_validate(report)]

    monkeypatch.setattr(fix_runs, "diagnose_source", fake)
    assert main(["fix", str(log), "--repo", str(git_repo)]) == 3
    assert got[0]["source"] == str(log) and got[0]["model"] is not None and got[0]["recorder"] is not None
    out = capsys.readouterr().out
    assert ": test (decided by rules" in out and "tests/test_calc.py:5" in out and "hint: the code" in out
    seed = script.seen[0][1].content
    assert "tests/test_calc.py:5" in seed and "Category: test (decided by rules)" in seed
    assert "1 failed in 0.03s" not in seed  # only the diagnosis, never the log itself
    assert main(["fix", str(log), "--repo", str(git_repo), "--no-llm-diagnosis"]) == 3
    assert got[1]["model"] is None


def test_log_from_stdin(git_repo: Path, script: Script, runs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(LOG.encode())))
    assert main(["fix", "-", "--repo", str(git_repo), "--no-llm-diagnosis"]) == 3
    assert "assert -1 == 5" in script.seen[0][1].content


def test_a_run_in_use_by_another_process_is_refused(git_repo: Path, log: Path, script: Script, runs: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    run_id = _fix_awaiting(git_repo, log, capsys, runs)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, sys, time; f = open(sys.argv[1], 'a'); "
         "fcntl.flock(f, fcntl.LOCK_EX); print('locked', flush=True); time.sleep(30)", str(runs / f"{run_id}.lock")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        capsys.readouterr()
        assert main(["approve", run_id, "--sha256", diff_sha256(FIX)]) == 2
        assert "in use by another" in capsys.readouterr().err
        assert main(["resume", run_id]) == 2
    finally:
        holder.kill()
        holder.wait()
    assert main(["approve", run_id, "--sha256", diff_sha256(FIX)]) == 0  # the lock went with its process


def test_a_reused_call_id_after_approval_never_reopens_the_proposal(
        git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A model (or a replayed script) that sends propose_fix again with an id it used before must not turn an
    approved run back into one awaiting approval."""
    log = tmp_path / "ci.log"
    log.write_text(LOG)
    script = tmp_path / "model.json"
    script.write_text(json.dumps([READ, PROPOSE, PROPOSE, FINAL]))
    monkeypatch.setenv("REPOPILOT_MODEL", f"scripted:{script}")
    monkeypatch.setattr(fix_cli, "_stdin_is_terminal", lambda: False)
    assert main(["fix", str(log), "--repo", str(git_repo)]) == 3
    run_id = _run_ids()[-1]
    assert main(["approve", run_id, "--repo", str(git_repo), "--sha256", diff_sha256(FIX)]) == 0
    assert main(["resume", run_id]) == 0
    trace = load_trace(run_id)
    assert trace.status == "completed" and trace.answer == FINAL
    assert trace.proposal is not None and trace.proposal["decision"] == "approved"
    again = [s for s in trace.steps if s.type == "tool_result" and s.tool_name == "propose_fix"][-1]
    assert again.error and "already approved and applied" in again.error


def _run_ids() -> list[str]:
    return sorted(p.stem for p in runs_dir().glob("*.json"))
