"""The approved apply: one commit on a new branch, nothing else in the repository changes."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from repopilot.core import ApprovalError, diff_sha256
from repopilot.repo.apply import AppliedFix, apply_fix, branch_for, commit_object, find_applied, rebuild_commit

FIX = """--- a/src/calc.py
+++ b/src/calc.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b
"""


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def _snapshot(root: Path) -> dict[str, str]:
    return {
        "head": _git(root, "rev-parse", "HEAD"),
        "branch": _git(root, "symbolic-ref", "HEAD"),
        "status": _git(root, "status", "--porcelain", "--untracked-files=all"),
        "index": (root / ".git" / "index").read_bytes().hex(),
        "calc": (root / "src" / "calc.py").read_text(),
        "refs": _git(root, "for-each-ref", "--format=%(refname) %(objectname)"),
    }


def _apply(root: Path, diff: str = FIX, run_id: str = "run-1", who: str = "alice") -> AppliedFix:
    return apply_fix(root, diff, run_id=run_id, sha256=diff_sha256(diff), explanation="Add, not subtract.\n\n"
                     "add() subtracted its arguments.", who=who)


def test_apply_creates_one_commit_and_touches_nothing_else(git_repo: Path) -> None:
    # A dirty working tree and a staged change must survive untouched.
    (git_repo / "README.md").write_text("# Sample\n\nlocal edit\n")
    (git_repo / "notes.txt").write_text("untracked\n")
    _git(git_repo, "add", "notes.txt")
    before = _snapshot(git_repo)
    applied = _apply(git_repo)
    after = _snapshot(git_repo)
    assert {k: v for k, v in after.items() if k != "refs"} == {k: v for k, v in before.items() if k != "refs"}
    new_refs = set(after["refs"].splitlines()) - set(before["refs"].splitlines())
    assert new_refs == {f"refs/heads/repopilot/run-1 {applied.commit}"}
    head = before["head"].strip()
    assert _git(git_repo, "rev-list", f"{head}..repopilot/run-1").split() == [applied.commit]
    assert _git(git_repo, "rev-parse", "repopilot/run-1^").strip() == head
    assert _git(git_repo, "show", "repopilot/run-1:src/calc.py") == "def add(a, b):\n    return a + b\n"
    assert _git(git_repo, "diff", "--name-only", head, "repopilot/run-1").split() == ["src/calc.py"]
    msg = _git(git_repo, "log", "-1", "--format=%B", "repopilot/run-1")
    assert msg.startswith("repopilot: Add, not subtract.")
    assert f"RepoPilot-Diff-SHA256: {diff_sha256(FIX)}" in msg
    assert "Approved-by: alice" in msg


def test_second_apply_recognises_the_branch(git_repo: Path) -> None:
    first = _apply(git_repo)
    second = _apply(git_repo)
    assert second.already and second.commit == first.commit
    assert find_applied(git_repo, "run-1", diff_sha256(FIX)) == first.commit


def test_existing_foreign_branch_is_never_overwritten(git_repo: Path) -> None:
    _git(git_repo, "branch", branch_for("run-1"))
    before = _git(git_repo, "rev-parse", "repopilot/run-1")
    with pytest.raises(ApprovalError, match="already exists"):
        _apply(git_repo)
    assert _git(git_repo, "rev-parse", "repopilot/run-1") == before


def test_altered_diff_is_refused(git_repo: Path) -> None:
    with pytest.raises(ApprovalError, match="sha256"):
        apply_fix(git_repo, FIX, run_id="run-1", sha256=diff_sha256(FIX + " "), explanation="x", who="a")
    assert "repopilot/run-1" not in _git(git_repo, "branch")


def test_diff_that_no_longer_applies_is_refused(git_repo: Path) -> None:
    (git_repo / "src" / "calc.py").write_text("def add(a, b):\n    return b - a\n")
    _git(git_repo, "commit", "-qam", "moved on")
    with pytest.raises(ApprovalError, match="no longer be applied"):
        _apply(git_repo)
    assert "repopilot/run-1" not in _git(git_repo, "branch")


def test_works_without_a_git_identity(git_repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _git(git_repo, "config", "--unset", "user.name")
    _git(git_repo, "config", "--unset", "user.email")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for var in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"):
        monkeypatch.delenv(var, raising=False)
    applied = _apply(git_repo)
    assert "RepoPilot" in _git(git_repo, "log", "-1", "--format=%an %cn", applied.commit)


def test_the_commit_keeps_the_whole_explanation() -> None:
    """Issue 13: a long first line was cut at 72 characters mid-sentence and the rest was lost."""
    from repopilot.repo.apply import _message

    long_first = ("add() subtracts its arguments instead of adding them, so every caller that sums two prices "
                  "gets a negative total; make it add.")
    msg = _message("r1", "abc", f"{long_first}\n\nThe failing test expects add(2, 3) == 5.\n  - indented", "me")
    subject, body = msg.split("\n\n", 1)
    assert subject == "repopilot: add() subtracts its arguments instead of adding them, so…"
    assert len(subject) <= 72
    assert body.startswith(long_first + "\n\nThe failing test expects add(2, 3) == 5.\n  - indented\n\n")
    short = _message("r1", "abc", "Make add() add. It subtracted.\n\nWhy: the test.", "me")
    assert short.startswith("repopilot: Make add() add.\n\nMake add() add. It subtracted.\n\nWhy: the test.\n\n")
    fits = _message("r1", "abc", "Make add() add.\n\nWhy: the test.", "me")
    assert fits.startswith("repopilot: Make add() add.\n\nWhy: the test.\n\nRepoPilot-Run: r1\n")


def _fresh_clone(source: Path, target: Path, ref: str = "main") -> Path:
    # --no-local: only what `ref` reaches is copied (a local clone would copy every object of the source).
    subprocess.run(["git", "clone", "-q", "--no-local", "--single-branch", "--branch", ref, str(source), str(target)],
                   check=True, capture_output=True)
    return target


def test_a_fresh_checkout_makes_exactly_the_approved_commit_again(git_repo: Path, tmp_path: Path) -> None:
    """A retried hand-off runs in a new clone that lacks the approved commit (it was never pushed): the recorded
    object and the diff make it again, with the same id, not a look-alike with a new date."""
    applied = _apply(git_repo)
    stored = commit_object(git_repo, applied.commit)
    clone = _fresh_clone(git_repo, tmp_path / "clone")
    missing = subprocess.run(["git", "cat-file", "-e", applied.commit], cwd=clone, capture_output=True)
    assert missing.returncode != 0  # the clone of main does not hold the branch's commit
    rebuild_commit(clone, FIX, applied.commit, stored)
    assert _git(clone, "cat-file", "commit", applied.commit) == stored
    assert _git(clone, "show", f"{applied.commit}:src/calc.py") == "def add(a, b):\n    return a + b\n"


def test_a_commit_that_cannot_be_made_again_is_refused_clearly(git_repo: Path, tmp_path: Path) -> None:
    applied = _apply(git_repo)
    stored = commit_object(git_repo, applied.commit)
    clone = _fresh_clone(git_repo, tmp_path / "clone")
    # An altered record (another message) would hash to another commit: refused, nothing written.
    with pytest.raises(ApprovalError, match=r"could not be made again here .*nothing was pushed"):
        rebuild_commit(clone, FIX, applied.commit, stored.replace("Add, not subtract", "Add, not multiply"))
    # A diff that is not the one the tree came from gives another tree.
    other = FIX.replace("return a + b", "return b + a")
    with pytest.raises(ApprovalError, match=r"gives another tree"):
        rebuild_commit(clone, other, applied.commit, stored)
    # A branch rewritten since: the parent is gone from the new checkout.
    _git(git_repo, "commit", "-q", "--amend", "-m", "rewritten")
    rewritten = _fresh_clone(git_repo, tmp_path / "rewritten")
    with pytest.raises(ApprovalError, match=r"its parent [0-9a-f]{12} is not in this checkout"):
        rebuild_commit(rewritten, FIX, applied.commit, stored)
    assert subprocess.run(["git", "cat-file", "-e", applied.commit], cwd=clone, capture_output=True).returncode != 0
