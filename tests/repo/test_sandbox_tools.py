import os
import subprocess
from pathlib import Path

import pytest

from repopilot.core import SandboxError, ToolCall, ToolRegistry
from repopilot.repo import Sandbox, open_repo, repo_tools


def run(root: Path, name: str, **args: object) -> tuple[str, bool]:
    outcome = ToolRegistry(repo_tools(root)).execute(ToolCall(id="1", name=name, arguments=dict(args)))
    return outcome.content, outcome.is_error


@pytest.mark.parametrize("path", [
    "../outside.txt", "src/../../outside.txt", "/etc/passwd", "~/.ssh/id_rsa", ".git/config", "src/.git/x",
    ".git", "--output=/tmp/x", "-rf", "a\x00b", "C:\\Windows\\win.ini",
])
def test_hostile_paths_are_refused(git_repo: Path, path: str) -> None:
    with pytest.raises(SandboxError):
        Sandbox(git_repo).relative(path)
    content, is_error = run(git_repo, "read_file", path=path)
    assert is_error and "read_file failed" in content


def test_symlink_pointing_outside_is_refused(git_repo: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET")
    (git_repo / "link.txt").symlink_to(secret)
    (git_repo / "linkdir").symlink_to(tmp_path)
    for path in ("link.txt", "linkdir/secret.txt"):
        content, is_error = run(git_repo, "read_file", path=path)
        assert is_error and "outside the repository" in content
        assert "TOP SECRET" not in content
    content, is_error = run(git_repo, "search_code", pattern="SECRET", path="linkdir")
    assert is_error


def test_symlink_into_git_dir_is_refused(git_repo: Path) -> None:
    (git_repo / "cfg").symlink_to(git_repo / ".git" / "config")
    content, is_error = run(git_repo, "read_file", path="cfg")
    assert is_error and ".git" in content


def test_symlink_inside_repo_is_allowed(git_repo: Path) -> None:
    (git_repo / "calc_link.py").symlink_to(git_repo / "src" / "calc.py")
    content, is_error = run(git_repo, "read_file", path="calc_link.py")
    assert not is_error and "return a - b" in content


def test_read_file_numbers_lines_and_honours_ranges(git_repo: Path) -> None:
    content, is_error = run(git_repo, "read_file", path="src/calc.py", start_line=2, end_line=2)
    assert not is_error
    assert content.strip() == "2      return a - b"


def test_binary_and_huge_files_get_a_note(git_repo: Path) -> None:
    (git_repo / "blob.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00binary")
    content, is_error = run(git_repo, "read_file", path="blob.bin")
    assert not is_error and "binary file" in content and "PNG" not in content
    (git_repo / "huge.txt").write_text("line\n" * 400_000)
    content, _ = run(git_repo, "read_file", path="huge.txt")
    assert "over the" in content and "line range" in content
    content, _ = run(git_repo, "read_file", path="huge.txt", start_line=399_999, end_line=400_005)
    assert content.splitlines()[0].strip().startswith("399999")


def test_list_files_and_glob(git_repo: Path) -> None:
    content, _ = run(git_repo, "list_files", path=".", glob="*.py")
    assert content.splitlines() == ["src/calc.py", "tests/test_calc.py"]
    content, _ = run(git_repo, "list_files", path="src")
    assert content.splitlines() == ["src/calc.py"]


def test_search_code_treats_option_shaped_patterns_as_data(git_repo: Path) -> None:
    (git_repo / "notes.txt").write_text("use --output=/tmp/file carefully\n")
    content, is_error = run(git_repo, "search_code", pattern="--output=", fixed_string=True)
    assert not is_error and content.startswith("notes.txt:1:")
    content, is_error = run(git_repo, "search_code", pattern="def add")
    assert content == "src/calc.py:1:def add(a, b):"
    content, is_error = run(git_repo, "search_code", pattern="([unclosed")
    assert is_error and "invalid regular expression" in content


def test_git_tools(git_repo: Path) -> None:
    (git_repo / "src" / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    status, _ = run(git_repo, "git_status")
    assert "M src/calc.py" in status
    diff, _ = run(git_repo, "git_diff")
    assert "-    return a - b" in diff and "+    return a + b" in diff
    diff, _ = run(git_repo, "git_diff", ref="HEAD", path="src")
    assert "+    return a + b" in diff
    log, _ = run(git_repo, "git_log", max_count=1)
    assert "initial" in log
    content, is_error = run(git_repo, "git_diff", ref="--output=/tmp/pwned")
    assert is_error and "option" in content
    content, is_error = run(git_repo, "git_log", ref="no-such-branch")
    assert is_error and "unknown git ref" in content


def test_repository_config_cannot_make_git_run_programs(git_repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    script = tmp_path / "evil.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\n")
    script.chmod(0o755)
    subprocess.run(["git", "config", "core.fsmonitor", str(script)], cwd=git_repo, check=True)
    subprocess.run(["git", "config", "diff.external", str(script)], cwd=git_repo, check=True)
    (git_repo / "src" / "calc.py").write_text("changed\n")
    run(git_repo, "git_status")
    run(git_repo, "git_diff")
    assert not marker.exists()


def test_open_repo_refuses_non_repositories(tmp_path: Path) -> None:
    from repopilot.core import InputError

    with pytest.raises(InputError, match="not inside a git repository"):
        open_repo(tmp_path)
    with pytest.raises(InputError, match="does not exist"):
        open_repo(tmp_path / "missing")


def test_tools_are_confined_even_when_cwd_differs(
        git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "outside.txt").write_text("outside")
    content, is_error = run(git_repo, "read_file", path="outside.txt")
    assert is_error and "no such file" in content
    assert os.getcwd() == str(tmp_path)
