"""propose_fix's edit form (path, old_text, new_text): the diff is written by the tool and then checked exactly
like one the model wrote; every refusal says what to change."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from repopilot.core import ApprovalRequired, ToolContext
from repopilot.repo.diff import InvalidDiff
from repopilot.repo.edit import edit_diff
from repopilot.repo.propose import propose_fix_tool

EXPECTED = """--- a/src/calc.py
+++ b/src/calc.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b
"""


def _invoke(root: Path, **arguments: Any) -> Any:
    return propose_fix_tool(root).invoke({"explanation": "add must add", **arguments},
                                         ToolContext("run", "call", {}))


def test_an_edit_becomes_the_diff_a_person_reviews(git_repo: Path) -> None:
    with pytest.raises(ApprovalRequired) as done:
        _invoke(git_repo, path="src/calc.py", old_text="return a - b", new_text="return a + b")
    proposal = done.value.proposal
    assert proposal.diff == EXPECTED and proposal.files == ["src/calc.py"]
    # The working tree is never written: the diff waits for approval.
    assert (git_repo / "src" / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"


def test_read_files_line_numbers_are_tolerated(git_repo: Path) -> None:
    numbered = "     2  return a - b"  # as read_file shows line 2, indentation after the two spaces
    assert edit_diff(git_repo, "src/calc.py", "     1  def add(a, b):\n" + numbered.replace("  return", "      return"),
                     "     1  def add(a, b):\n     2      return a + b") == EXPECTED


def test_a_file_without_a_final_newline_keeps_gits_marker(git_repo: Path) -> None:
    (git_repo / "src" / "calc.py").write_text("def add(a, b):\n    return a - b")
    subprocess.run(["git", "commit", "-qam", "no newline"], cwd=git_repo, check=True)
    with pytest.raises(ApprovalRequired) as done:
        _invoke(git_repo, path="src/calc.py", old_text="a - b", new_text="a + b")
    assert done.value.proposal.diff.endswith("+    return a + b\n\\ No newline at end of file\n")


@pytest.mark.parametrize(("arguments", "needle"), [
    ({"path": "src/calc.py", "old_text": "return a * b", "new_text": "x"}, "does not occur in src/calc.py"),
    ({"path": "src/calc.py", "old_text": "a", "new_text": "x"}, "occurs 3 times"),
    ({"path": "src/calc.py", "old_text": "a - b", "new_text": "a - b"}, "changes nothing"),
    ({"path": "src/calc.py", "old_text": "", "new_text": "x"}, "old_text is empty"),
    ({"path": "src/nope.py", "old_text": "a", "new_text": "b"}, "not a file in HEAD"),
    ({"path": "../outside.py", "old_text": "a", "new_text": "b"}, "'..' is refused"),
    ({"path": "src/calc.py", "old_text": "a - b"}, "missing: new_text"),
    ({}, "no change given"),
    ({"diff": EXPECTED, "path": "src/calc.py", "old_text": "a - b", "new_text": "a + b"}, "not both"),
])
def test_refusals_say_what_to_change_and_count_as_invalid(git_repo: Path, arguments: dict[str, Any],
                                                          needle: str) -> None:
    state: dict[str, Any] = {}
    out = propose_fix_tool(git_repo).invoke({"explanation": "x", **arguments}, ToolContext("r", "c", state))
    assert out.is_error and needle in out.content, out.content
    assert state["invalid_proposals"] == ["c"]


def test_the_edit_is_made_on_head_not_the_working_tree(git_repo: Path) -> None:
    (git_repo / "src" / "calc.py").write_text("def add(a, b):\n    return b - a\n")  # uncommitted
    with pytest.raises(InvalidDiff, match="as HEAD has it"):
        edit_diff(git_repo, "src/calc.py", "return b - a", "return a + b")
    assert edit_diff(git_repo, "src/calc.py", "return a - b", "return a + b") == EXPECTED


def test_the_schema_offers_both_forms_and_requires_only_the_explanation(git_repo: Path) -> None:
    params = propose_fix_tool(git_repo).parameters
    assert params["required"] == ["explanation"]
    assert {"diff", "path", "old_text", "new_text"} <= set(params["properties"])


def test_a_path_given_as_a_place_names_its_file(git_repo: Path) -> None:
    assert edit_diff(git_repo, "src/calc.py:2", "return a - b", "return a + b") == EXPECTED
    assert edit_diff(git_repo, "src/calc.py:2:5", "return a - b", "return a + b") == EXPECTED
    with pytest.raises(InvalidDiff, match=r"src/nope.py:2 is not a file in HEAD"):
        edit_diff(git_repo, "src/nope.py:2", "a", "b")
