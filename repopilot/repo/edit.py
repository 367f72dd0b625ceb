"""The edit form of a proposal: replace one exact piece of a file, as HEAD has it, with new text. A model that
cannot count hunk lines or copy context lines reliably (small local models cannot) can still name the text it
changes; the unified diff is written here and then checked exactly like one the model wrote."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

from ..core import SandboxError
from .diff import InvalidDiff
from .gitrun import GitFailed, GitOutput, run_git
from .sandbox import Sandbox

__all__ = ["edit_diff"]

_MAX_FILE_BYTES = 1_000_000
# read_file shows each line as "{number:>6}  {text}"; a model often copies the numbers along with the text.
_NUMBERED = re.compile(r"^ *\d+  ", re.MULTILINE)
_NO_NEWLINE = "\\ No newline at end of file\n"
_LOCATION = re.compile(r":\d+(?::\d+)?$")


def _head_file(root: Path, rel: str) -> tuple[GitOutput, str]:
    """The file as HEAD has it, and its path: "src/x.py:12" (a place, as diagnoses name them) is src/x.py."""
    for candidate in dict.fromkeys([rel, _LOCATION.sub("", rel)]):
        try:
            return run_git(root, ["cat-file", "blob", f"HEAD:{candidate}"], max_bytes=_MAX_FILE_BYTES), candidate
        except GitFailed:
            continue
    raise InvalidDiff(f"{rel} is not a file in HEAD; an edit changes an existing file (write a diff to add a new "
                      "one)")


def _unnumbered(text: str) -> str | None:
    """`text` without read_file's line numbers, when every non-blank line carries one; else None."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines or not all(_NUMBERED.match(ln) for ln in lines):
        return None
    return _NUMBERED.sub("", text)


def _located(current: str, old_text: str, new_text: str, path: str) -> tuple[str, str]:
    """The (old, new) pair to replace: `old_text` as given, or without read_file's line numbers."""
    candidates = [(old_text, new_text)]
    bare = _unnumbered(old_text)
    if bare is not None:
        candidates.append((bare, _unnumbered(new_text) or new_text))
    for old, new in candidates:
        count = current.count(old)
        if count == 1:
            return old, new
        if count > 1:
            raise InvalidDiff(f"old_text occurs {count} times in {path}; include more of the surrounding lines "
                              "so that it names one place")
    raise InvalidDiff(f"old_text does not occur in {path} as HEAD has it; read the file with read_file and copy "
                      "the text to change exactly (without the line numbers)")


def _diff_lines(lines: list[str]) -> str:
    # difflib leaves a last line without its newline as it is; git needs the marker after it.
    return "".join(ln if ln.endswith("\n") else ln + "\n" + _NO_NEWLINE for ln in lines)


def edit_diff(root: Path, path: str, old_text: str, new_text: str) -> str:
    """A unified diff against HEAD that replaces the one occurrence of `old_text` in `path` with `new_text`.
    Raises InvalidDiff saying what to change when the text is missing, ambiguous, or the edit changes nothing."""
    try:
        rel = Sandbox(root).relative(path)
    except SandboxError as exc:
        raise InvalidDiff(str(exc)) from None
    if not old_text:
        raise InvalidDiff("old_text is empty: copy the lines to change from read_file")
    blob, rel = _head_file(root, rel)
    if blob.truncated:
        raise InvalidDiff(f"{rel} is over {_MAX_FILE_BYTES} bytes; write a diff to change it")
    current = str(blob)
    old, new = _located(current, old_text, new_text, rel)
    updated = current.replace(old, new, 1)
    if updated == current:
        raise InvalidDiff("new_text is the same as old_text: the edit changes nothing")
    return _diff_lines(list(difflib.unified_diff(current.splitlines(keepends=True),
                                                 updated.splitlines(keepends=True), f"a/{rel}", f"b/{rel}")))
