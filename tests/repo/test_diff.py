"""Diff validation: what a proposal must be before anyone sees it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from repopilot.repo.diff import InvalidDiff, parse_diff, validate_diff

FIX = """--- a/src/calc.py
+++ b/src/calc.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b
"""


def _paths(diff: str, old: str, new: str | None = None) -> str:
    return diff.replace("a/src/calc.py", f"a/{old}" if old else old).replace(
        "b/src/calc.py", f"b/{new if new is not None else old}")


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def test_plain_diff_is_valid(git_repo: Path) -> None:
    v = validate_diff(git_repo, FIX)
    assert v.files == ["src/calc.py"]
    assert v.strip == 1
    assert (v.added, v.removed) == (1, 1)
    assert v.base == _git(git_repo, "rev-parse", "HEAD").strip()


def test_git_style_and_unprefixed_diffs_are_valid(git_repo: Path) -> None:
    git_style = "diff --git a/src/calc.py b/src/calc.py\nindex 0000000..1111111 100644\n" + FIX
    assert validate_diff(git_repo, git_style).files == ["src/calc.py"]
    unprefixed = FIX.replace("a/src", "src").replace("b/src", "src")
    v = validate_diff(git_repo, unprefixed)
    assert (v.files, v.strip) == (["src/calc.py"], 0)


def test_new_file_and_missing_final_newline(git_repo: Path) -> None:
    new = ("diff --git a/docs/notes.md b/docs/notes.md\nnew file mode 100644\n--- /dev/null\n"
           "+++ b/docs/notes.md\n@@ -0,0 +1 @@\n+hello")
    v = validate_diff(git_repo, new)
    assert v.files == ["docs/notes.md"]
    assert v.diff.endswith("+hello\n")  # normalised, and that is the text recorded


@pytest.mark.parametrize(("old", "needle"), [
    ("../outside.py", "'..' is refused"),
    ("src/../../outside.py", "'..' is refused"),
    (".git/config", ".git"),
    ("src/.GIT/hooks/pre-commit", ".git"),
])
def test_paths_outside_are_refused(git_repo: Path, old: str, needle: str) -> None:
    with pytest.raises(InvalidDiff, match=needle.replace(".", r"\.").replace("'", "'")):
        validate_diff(git_repo, _paths(FIX, old))


def test_absolute_path_is_refused(git_repo: Path) -> None:
    diff = FIX.replace("--- a/src/calc.py", "--- /etc/passwd").replace("+++ b/src/calc.py", "+++ /etc/passwd")
    with pytest.raises(InvalidDiff, match="absolute paths are refused"):
        validate_diff(git_repo, diff)


def test_git_header_path_is_checked_too(git_repo: Path) -> None:
    diff = "diff --git a/../evil.py b/../evil.py\n" + FIX
    with pytest.raises(InvalidDiff, match=r"\.\."):
        validate_diff(git_repo, diff)


def test_symlink_escape_in_working_tree_is_refused(git_repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    os.symlink(outside, git_repo / "linked")
    with pytest.raises(InvalidDiff, match="resolves outside the repository"):
        validate_diff(git_repo, _paths(FIX, "linked/calc.py"))


def test_symlink_in_head_is_refused(git_repo: Path) -> None:
    os.symlink("src", git_repo / "alias")
    _git(git_repo, "add", "alias")
    _git(git_repo, "commit", "-qm", "symlink")
    (git_repo / "alias").unlink()  # gone from the working tree, still in HEAD
    (git_repo / "alias").mkdir()
    with pytest.raises(InvalidDiff, match="symbolic link in HEAD"):
        validate_diff(git_repo, _paths(FIX, "alias/calc.py"))


def test_symlink_mode_is_refused(git_repo: Path) -> None:
    diff = ("diff --git a/evil b/evil\nnew file mode 120000\n--- /dev/null\n+++ b/evil\n@@ -0,0 +1 @@\n"
            "+/etc/passwd\n\\ No newline at end of file\n")
    with pytest.raises(InvalidDiff, match="mode 120000"):
        validate_diff(git_repo, diff)


@pytest.mark.parametrize("diff", [
    "diff --git a/logo.png b/logo.png\nnew file mode 100644\nindex 0000000..1234567\nGIT binary patch\n"
    "literal 3\nKcmZ>Y%K!iX00062\n\nliteral 0\nHcmV?d00001\n",
    "diff --git a/logo.png b/logo.png\nindex 1111111..2222222 100644\nBinary files a/logo.png and b/logo.png "
    "differ\n",
    FIX.replace("a + b", "a \x00 b"),
])
def test_binary_is_refused(git_repo: Path, diff: str) -> None:
    with pytest.raises(InvalidDiff, match=r"binary|NUL"):
        validate_diff(git_repo, diff)


def test_diff_that_does_not_apply_to_head(git_repo: Path) -> None:
    with pytest.raises(InvalidDiff, match=r"does not apply to HEAD .*patch does not apply"):
        validate_diff(git_repo, FIX.replace("-    return a - b", "-    return a * b"))


def test_checked_against_head_not_the_working_tree(git_repo: Path) -> None:
    # The working tree already has the fix; the diff still applies to HEAD, and the check touches nothing.
    (git_repo / "src" / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    status = _git(git_repo, "status", "--porcelain")
    validate_diff(git_repo, FIX)
    assert _git(git_repo, "status", "--porcelain") == status
    assert (git_repo / "src" / "calc.py").read_text().endswith("a + b\n")


def test_zero_context_hunk_in_the_middle_is_refused(git_repo: Path) -> None:
    # Line numbers alone are not trusted: a hunk must be anchored on context (or on the file's start/end).
    diff = "--- a/tests/test_calc.py\n+++ b/tests/test_calc.py\n@@ -4 +4 @@\n-def test_add():\n+def test_x():\n"
    with pytest.raises(InvalidDiff, match="does not apply"):
        validate_diff(git_repo, diff)


@pytest.mark.parametrize(("diff", "needle"), [
    ("", "empty"),
    ("just some words\n", "not part of a unified diff"),
    ("```diff\n" + FIX + "```\n", "fence"),
    ("@@ -1,2 +1,2 @@\n x\n", "before its file"),
    (FIX.replace("@@ -1,2 +1,2 @@", "@@ -1,3 +1,3 @@") + "garbage\n", "not part of a unified diff"),
    (FIX.replace("@@ -1,2 +1,2 @@", "@@ one two @@"), "malformed hunk header"),
    ("--- a/src/calc.py\n+++ b/src/calc.py\n", "no hunks"),
    (FIX.replace("+++ b/src/calc.py", "+++ b/src/other.py"), "different files"),
])
def test_unparseable_diffs(git_repo: Path, diff: str, needle: str) -> None:
    with pytest.raises(InvalidDiff, match=needle):
        validate_diff(git_repo, diff)


def test_size_caps(git_repo: Path) -> None:
    with pytest.raises(InvalidDiff, match="byte cap"):
        validate_diff(git_repo, FIX, max_bytes=50)
    with pytest.raises(InvalidDiff, match="cap of 1"):
        validate_diff(git_repo, FIX, max_lines=1)
    two = FIX + FIX.replace("src/calc.py", "README.md")
    with pytest.raises(InvalidDiff, match="touches 2 files"):
        validate_diff(git_repo, two, max_files=1)


def test_parse_counts_hunks_and_quoted_paths() -> None:
    diff = ('diff --git "a/sp ace/\\303\\251.py" "b/sp ace/\\303\\251.py"\n--- "a/sp ace/\\303\\251.py"\n'
            '+++ "b/sp ace/\\303\\251.py"\n@@ -1 +1 @@\n-x\n+y\n@@ -5,2 +5,2 @@\n a\n-b\n+c\n')
    (patch,) = parse_diff(diff)
    assert (patch.old_path, patch.new_path) == ("a/sp ace/é.py", "b/sp ace/é.py")
    assert (patch.hunks, patch.added, patch.removed) == (2, 2, 2)


def test_trailing_blank_lines_and_crlf_headers_are_accepted(git_repo: Path) -> None:
    assert validate_diff(git_repo, FIX + "\n\n").files == ["src/calc.py"]
    crlf_headers = FIX.replace("--- a/src/calc.py\n", "--- a/src/calc.py\r\n")
    assert parse_diff(crlf_headers)[0].old_path == "a/src/calc.py"


def test_rename_without_hunks(git_repo: Path) -> None:
    diff = ("diff --git a/src/calc.py b/src/arith.py\nsimilarity index 100%\nrename from src/calc.py\n"
            "rename to src/arith.py\n")
    assert validate_diff(git_repo, diff).files == ["src/arith.py", "src/calc.py"]
    escape = diff.replace("rename to src/arith.py", "rename to ../arith.py")
    with pytest.raises(InvalidDiff, match=r"\.\."):
        validate_diff(git_repo, escape)


def test_deleting_a_file(git_repo: Path) -> None:
    diff = ("diff --git a/README.md b/README.md\ndeleted file mode 100644\n--- a/README.md\n+++ /dev/null\n"
            "@@ -1,3 +0,0 @@\n-# Sample\n-\n-A sample project.\n")
    v = validate_diff(git_repo, diff)
    assert (v.files, v.removed) == (["README.md"], 3)


@pytest.mark.parametrize("header", ["@@ -1,3 +1,3 @@", "@@ -1,1 +1,1 @@", "@@ -1 +1,7 @@ def add"])
def test_miscounted_hunks_are_corrected(git_repo: Path, header: str) -> None:
    wrong = FIX.replace("@@ -1,2 +1,2 @@", header)
    with pytest.raises(InvalidDiff, match="hunk"):
        parse_diff(wrong)  # the parser itself stays strict
    v = validate_diff(git_repo, wrong + "\n")
    assert "@@ -1,2 +1,2 @@" in v.diff and header not in v.diff
    assert (v.added, v.removed) == (1, 1)


def test_recount_does_not_save_a_diff_that_does_not_apply(git_repo: Path) -> None:
    wrong = FIX.replace("@@ -1,2 +1,2 @@", "@@ -1,3 +1,3 @@").replace("a - b", "a / b")
    with pytest.raises(InvalidDiff, match="does not apply"):
        validate_diff(git_repo, wrong)


def test_asymmetric_context_gets_a_hint_the_model_can_act_on(tmp_path: Path) -> None:
    root = tmp_path / "r"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / "calc.py").write_text(
        'def add(a, b):\n    """Sum."""\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n')
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "c"], cwd=root,
                   check=True)
    diff = ('--- a/calc.py\n+++ b/calc.py\n@@ -1,3 +1,3 @@\n def add(a, b):\n     """Sum."""\n'
            '-    return a - b\n+    return a + b\n')
    with pytest.raises(InvalidDiff, match="2 context line\\(s\\) before its change and 0 after"):
        validate_diff(root, diff)
