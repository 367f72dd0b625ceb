"""Verified fixes: each outcome of a fix run's verification, the guard blocking a weakening, the receipt in the
trace and its binding to the approval. The project is the shared `git_repo` (add() subtracts; its test fails),
the failing command its real pytest run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from repopilot.app import approve_run, load_settings, start_fix
from repopilot.app.fix_runs import FixOutcome
from repopilot.app.settings import verify_environment
from repopilot.core import ApprovalError, Receipt, load_trace, trace_path
from tests.cli.test_fix import FIX, LOG

PYTEST = f"{sys.executable} -m pytest -q -p no:cacheprovider tests/test_calc.py"
WRONG = FIX.replace("+    return a + b", "+    return a * b")
SKIP = "\n".join(["--- a/tests/test_calc.py", "+++ b/tests/test_calc.py", "@@ -1,5 +1,7 @@", "+import pytest",
                  " from src.calc import add", " ", " ", '+@pytest.mark.skip(reason="flaky")', " def test_add():",
                  "     assert add(2, 3) == 5"]) + "\n"


def _propose(call_id: str, diff: str) -> dict[str, Any]:
    return {"content": "", "tool_calls": [{"id": call_id, "name": "propose_fix",
                                           "arguments": {"diff": diff, "explanation": "make add add"}}]}


def _run(git_repo: Path, tmp_path: Path, replies: list[Any], log: str = LOG, **flags: Any) -> FixOutcome:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(replies))
    (tmp_path / "ci.log").write_text(log)
    environ = {"REPOPILOT_MODEL": f"scripted:{script}", "PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    settings = load_settings(environ, tmp_path, **flags)
    return start_fix(str(tmp_path / "ci.log"), settings, repo=git_repo, no_llm_diagnosis=True)


def _receipts(run_id: str) -> list[Receipt]:
    return [Receipt.model_validate(s.detail) for s in load_trace(run_id).steps if s.type == "verification"]


def test_a_correct_fix_is_verified_with_a_receipt(git_repo: Path, tmp_path: Path) -> None:
    done = _run(git_repo, tmp_path, [_propose("p1", FIX)], verify_cmd=PYTEST)
    proposal = done.proposal
    assert proposal is not None and proposal.receipt is not None
    r = proposal.receipt
    assert r.outcome == "verified" and r.diff_sha256 == proposal.sha256 and r.base == proposal.base
    assert r.command is not None and r.command.command == PYTEST and r.command.source == "flag --verify-cmd"
    assert r.before is not None and r.before.exit_code == 1 and r.after is not None and r.after.exit_code == 0
    assert any("test_add" in line for line in r.before.causal)
    assert r.before.output_sha256 != r.after.output_sha256 and len(r.env_sha256) == 64 and "python" in r.tools
    assert Path(r.before.log).is_file() and Path(r.before.log).is_relative_to(trace_path(done.trace.run_id).parent)
    assert _receipts(done.trace.run_id) == [r]  # its own step in the trace
    assert "awaiting" in (done.trace.status or "")


def test_the_command_comes_from_the_log_and_is_narrowed(git_repo: Path, tmp_path: Path) -> None:
    # The log's `python -m pytest -q`, narrowed to the failing test; `python` here is this interpreter.
    log = LOG.replace("python -m pytest", f"{sys.executable} -m pytest")
    done = _run(git_repo, tmp_path, [_propose("p1", FIX)], log=log)
    r = done.proposal.receipt if done.proposal else None
    assert r is not None and r.command is not None
    assert r.command.command.endswith("-m pytest -q tests/test_calc.py::test_add")
    assert r.command.source.startswith("log line 1: ##[group]Run") and r.command.narrowed_from
    assert r.outcome == "verified"
    step = next(s for s in load_trace(done.trace.run_id).steps if s.detail.get("decision") == "verify_command")
    assert step.detail["source"] == r.command.source


def test_a_wrong_fix_goes_back_to_the_model_with_the_output(git_repo: Path, tmp_path: Path) -> None:
    done = _run(git_repo, tmp_path, [_propose("p1", WRONG), _propose("p2", FIX)], verify_cmd=PYTEST)
    first, second = _receipts(done.trace.run_id)
    assert first.outcome == "still_failing" and first.after is not None and first.after.exit_code == 1
    assert second.outcome == "verified"
    told = [m for m in done.trace.messages if m.get("role") == "tool" and m.get("tool_call_id") == "p1"]
    assert told and "still fails" in told[0]["content"] and "assert 6 == 5" in told[0]["content"]
    assert done.proposal is not None and done.proposal.tool_call_id == "p2"
    # HEAD's run was made once for both proposals.
    assert first.before == second.before


def test_a_weakening_is_blocked_and_nothing_runs(git_repo: Path, tmp_path: Path) -> None:
    done = _run(git_repo, tmp_path, [_propose("p1", SKIP), "I cannot fix it otherwise."], verify_cmd=PYTEST)
    (receipt,) = _receipts(done.trace.run_id)
    assert receipt.outcome == "blocked" and receipt.before is None and receipt.after is None
    assert "skip_added" in {h.rule for h in receipt.guard.hits}
    assert done.proposal is None
    told = [m for m in done.trace.messages if m.get("role") == "tool" and m.get("tool_call_id") == "p1"]
    assert "weakens the checks" in told[0]["content"]


def test_allow_weakening_lets_it_through_and_still_shows_it(git_repo: Path, tmp_path: Path) -> None:
    done = _run(git_repo, tmp_path, [_propose("p1", SKIP)], verify_cmd=PYTEST, allow_weakening=True)
    r = done.proposal.receipt if done.proposal else None
    assert r is not None and r.guard.allowed and r.guard.hits and r.outcome == "verified"


def test_head_passing_here_is_not_reproduced(git_repo: Path, tmp_path: Path) -> None:
    (git_repo / "src" / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    subprocess.run(["git", "-C", str(git_repo), "commit", "-qam", "already fixed"], check=True)
    diff = FIX.replace("-    return a - b\n+    return a + b", "-    return a + b\n+    return b + a")
    done = _run(git_repo, tmp_path, [_propose("p1", diff)], verify_cmd=PYTEST)
    r = done.proposal.receipt if done.proposal else None
    assert r is not None and r.outcome == "not_reproduced" and r.before is not None and r.before.exit_code == 0
    assert r.after is None and "no fix is claimed" in r.reason


def test_a_different_failure_on_head_is_not_reproduced(git_repo: Path, tmp_path: Path) -> None:
    done = _run(git_repo, tmp_path, [_propose("p1", FIX)], verify_cmd="echo 'ModuleNotFoundError: no module x'; "
                "exit 3")
    r = done.proposal.receipt if done.proposal else None
    assert r is not None and r.outcome == "not_reproduced" and "not the way the diagnosis says" in r.reason


def test_no_command_could_not_run(git_repo: Path, tmp_path: Path) -> None:
    log = "\n".join(x for x in LOG.splitlines() if "group]" not in x and "python -m pytest" not in x) + "\n"
    done = _run(git_repo, tmp_path, [_propose("p1", FIX)], log=log)
    r = done.proposal.receipt if done.proposal else None
    assert r is not None and r.outcome == "could_not_run" and "--verify-cmd" in r.reason and r.before is None


def test_a_command_past_its_time_limit_could_not_run(git_repo: Path, tmp_path: Path) -> None:
    done = _run(git_repo, tmp_path, [_propose("p1", FIX)], verify_cmd="sleep 20", verify_timeout=1.0)
    r = done.proposal.receipt if done.proposal else None
    assert r is not None and r.outcome == "could_not_run" and r.before is not None and r.before.timed_out


def test_the_receipt_is_bound_to_the_approval(git_repo: Path, tmp_path: Path) -> None:
    done = _run(git_repo, tmp_path, [_propose("p1", FIX)], verify_cmd=PYTEST)
    run_id = done.trace.run_id
    assert done.proposal is not None
    path = trace_path(run_id)
    original = path.read_text()
    # A receipt edited to claim another base commit (or diff) than the proposal's is refused.
    for field in ("base", "diff_sha256"):
        path.write_text(_edit_receipt(original, field, "0" * 40))
        with pytest.raises(ApprovalError, match="was made for another diff or base commit"):
            approve_run(run_id, sha256=done.proposal.sha256)
    with pytest.raises(ApprovalError, match="receipt"):
        approve_run(run_id, sha256=done.proposal.sha256)
    # A receipt whose step says something else than the proposal's copy is refused.
    path.write_text(original.replace('"result":"verified"', '"result":"still_failing"'))
    with pytest.raises(ApprovalError, match="receipt"):
        approve_run(run_id, sha256=done.proposal.sha256)
    path.write_text(original)
    applied = approve_run(run_id, sha256=done.proposal.sha256)
    assert applied.applied is not None and applied.proposal.receipt is not None


def _edit_receipt(text: str, field: str, value: str) -> str:
    """The trace with the proposal's copy of its receipt changed (the verification step left as it was)."""
    lines = []
    for line in text.splitlines():
        event = json.loads(line)
        receipt = ((event.get("set") or {}).get("proposal") or {}).get("receipt")
        if receipt:
            receipt[field] = value
        lines.append(json.dumps(event))
    return "\n".join(lines) + "\n"


def test_the_command_gets_no_secrets() -> None:
    env = verify_environment({"PATH": "/bin", "OPENAI_API_KEY": "sk-x", "GITHUB_TOKEN": "ghp", "HOME": "/h",
                              "AWS_SECRET_ACCESS_KEY": "a", "MY_SERVICE_TOKEN": "t", "LANG": "C.UTF-8"})
    assert env == {"PATH": "/bin", "HOME": "/h", "LANG": "C.UTF-8", "CI": "true"}


def test_the_verify_table_of_the_project_config(tmp_path: Path) -> None:
    (tmp_path / "repopilot.toml").write_text('[verify]\ncmd = "make test"\ntimeout = 30\nnetwork = true\n')
    settings = load_settings({}, tmp_path)
    assert settings.verify_cmd == "make test" and settings.verify_timeout == 30 and settings.verify_network
    assert settings.origins["verify_cmd"].endswith("repopilot.toml")
    (tmp_path / "repopilot.toml").write_text('[verify]\ncommand = "x"\n')
    with pytest.raises(Exception, match="unknown key 'command' in \\[verify\\]"):
        load_settings({}, tmp_path)
