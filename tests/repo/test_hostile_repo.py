"""A repository is untrusted: its config and attributes must not run programs or move the root (issue 15, item 2).

Each test plants one hostile setting, runs the tools (and `approve`'s apply), and checks that no program ran
(its marker file is absent) and that nothing outside the repository was read.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from repopilot.core import ToolCall, ToolContext, ToolRegistry, diff_sha256
from repopilot.repo import open_repo, repo_tools
from repopilot.repo.apply import apply_fix
from repopilot.repo.diff import validate_diff

FIX = """--- a/src/calc.py
+++ b/src/calc.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b
"""


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def _marker_program(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """A program that leaves a marker file when run (and behaves like `cat` otherwise)."""
    marker = tmp_path / f"ran-{name}"
    script = tmp_path / f"{name}.sh"
    script.write_text(f"#!/bin/sh\ntouch '{marker}'\ncat\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, marker


def _run(root: Path, name: str, **arguments: object) -> str:
    tools = ToolRegistry(repo_tools(root))
    out = tools.execute(ToolCall(id="c1", name=name, arguments=dict(arguments)), ToolContext("run", "c1"))
    return out.content


def _all_tools(root: Path) -> list[str]:
    return [_run(root, "git_status"), _run(root, "git_diff"), _run(root, "git_diff", staged=True),
            _run(root, "git_diff", ref="HEAD"), _run(root, "git_log"), _run(root, "list_files"),
            _run(root, "search_code", pattern="add"), _run(root, "read_file", path="src/calc.py")]


def test_filter_drivers_from_config_and_attributes_never_run(git_repo: Path, tmp_path: Path) -> None:
    clean, clean_ran = _marker_program(tmp_path, "clean")
    process, process_ran = _marker_program(tmp_path, "process")
    textconv, textconv_ran = _marker_program(tmp_path, "textconv")
    (git_repo / ".gitattributes").write_text("* filter=evil diff=evil\n")
    (git_repo / ".git" / "info" / "attributes").write_text("*.py filter=other\n")
    _git(git_repo, "config", "filter.evil.clean", str(clean))
    _git(git_repo, "config", "filter.evil.required", "true")
    _git(git_repo, "config", "filter.other.process", str(process))
    _git(git_repo, "config", "diff.evil.textconv", str(textconv))
    (git_repo / "src" / "calc.py").write_text("def add(a, b):\n    return a - b  # changed\n")
    outputs = _all_tools(git_repo)
    assert "changed" in outputs[1]  # the diff itself still works
    assert not clean_ran.exists() and not process_ran.exists() and not textconv_ran.exists()
    # approve's git calls (validate, temp index, apply, commit) run under the same rules.
    (git_repo / "src" / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    apply_fix(git_repo, FIX, run_id="r1", sha256=diff_sha256(FIX), explanation="fix", who="t")
    assert not clean_ran.exists() and not process_ran.exists() and not textconv_ran.exists()


def _signed_head(root: Path) -> None:
    """Make HEAD a commit carrying a (fake) signature, so showing signatures would call gpg."""
    raw = _git(root, "cat-file", "commit", "HEAD")
    head, _, body = raw.partition("\n\n")
    sig = "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----"
    obj = subprocess.run(["git", "hash-object", "-t", "commit", "-w", "--stdin"], cwd=root, check=True,
                         capture_output=True, input=f"{head}\n{sig}\n\n{body}".encode()).stdout.decode().strip()
    _git(root, "update-ref", "HEAD", obj)


def test_gpg_program_never_runs_for_log_or_commit(git_repo: Path, tmp_path: Path) -> None:
    gpg, gpg_ran = _marker_program(tmp_path, "gpg")
    _signed_head(git_repo)
    _git(git_repo, "config", "log.showSignature", "true")
    _git(git_repo, "config", "gpg.program", str(gpg))
    _git(git_repo, "config", "commit.gpgSign", "true")
    assert "initial" in _run(git_repo, "git_log")
    assert not gpg_ran.exists()
    applied = apply_fix(git_repo, FIX, run_id="r1", sha256=diff_sha256(FIX), explanation="fix", who="t")
    assert not gpg_ran.exists()
    assert "gpgsig" not in _git(git_repo, "cat-file", "commit", applied.commit)


def test_other_program_settings_never_run(git_repo: Path, tmp_path: Path) -> None:
    fsmonitor, fsmonitor_ran = _marker_program(tmp_path, "fsmonitor")
    ext, ext_ran = _marker_program(tmp_path, "extdiff")
    _git(git_repo, "config", "core.fsmonitor", str(fsmonitor))
    _git(git_repo, "config", "diff.external", str(ext))
    (git_repo / "src" / "calc.py").write_text("changed\n")
    _all_tools(git_repo)
    assert not fsmonitor_ran.exists() and not ext_ran.exists()


def test_core_worktree_cannot_move_the_root(git_repo: Path) -> None:
    _git(git_repo, "config", "core.worktree", "/")
    root = open_repo(git_repo)
    assert root == git_repo.resolve()
    out = _run(root, "read_file", path="etc/passwd")
    assert "root:" not in out and "no such file" in out
    assert "etc/passwd" not in _run(root, "list_files", path=".", max_results=2000)
    assert "calc.py" in _run(root, "list_files")
    assert "passwd" not in _run(root, "search_code", pattern="root:", fixed_string=True)


def test_git_environment_cannot_point_elsewhere(git_repo: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    other = tmp_path / "other"
    other.mkdir()
    _git(other, "init", "-q", "-b", "main")
    (other / "secret.txt").write_text("other repository's secret\n")
    _git(other, "add", "-A")
    _git(other, "-c", "user.name=o", "-c", "user.email=o@o", "commit", "-q", "-m", "other-commit")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", "/")
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'core.worktree'='/'")
    root = open_repo(git_repo)
    assert root == git_repo.resolve()
    log = _run(root, "git_log")
    assert "initial" in log and "other-commit" not in log
    assert "secret.txt" not in _run(root, "list_files")
    assert "root:" not in _run(root, "read_file", path="etc/passwd")
    assert "secret.txt" not in _run(root, "search_code", pattern="secret")
    assert os.environ["GIT_DIR"]  # the caller's environment is left as it was
    checked = validate_diff(root, FIX)
    assert checked.files == ["src/calc.py"]
