"""Validation of a proposed unified diff before anyone sees it.

A diff passes when it parses (git-style `diff --git` or plain `---`/`+++`, hunk line counts that add up), every
path stays inside the repository (no `..`, no absolute path, nothing under `.git`, no symlink on the way, in the
working tree or in HEAD), nothing is binary, it is within the size caps, and `git apply --check` accepts it
against HEAD's tree (a private index, so the working tree and the real index are never read or written).
Every refusal is one specific sentence the model can act on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..core import SandboxError, UserError
from ..core.sanitize import describe, unsafe_chars
from .gitindex import temp_index
from .gitrun import GitFailed, run_git
from .sandbox import Sandbox

__all__ = [
    "MAX_DIFF_BYTES",
    "MAX_DIFF_FILES",
    "MAX_DIFF_LINES",
    "FilePatch",
    "InvalidDiff",
    "ValidatedDiff",
    "git_apply_args",
    "parse_diff",
    "validate_diff",
]

MAX_DIFF_BYTES = 256_000
MAX_DIFF_FILES = 50
MAX_DIFF_LINES = 5_000  # added plus removed lines

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_ALLOWED_MODES = {"100644", "100755"}
_GIT_HEADERS = ("old mode ", "new mode ", "deleted file mode ", "new file mode ", "similarity index ",
                "dissimilarity index ", "rename from ", "rename to ", "copy from ", "copy to ", "index ")
_DEV_NULL = "/dev/null"
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "a": "\a", "b": "\b", "f": "\f", "r": "\r", "v": "\v"}


class InvalidDiff(UserError):
    """A proposed diff that cannot be shown or applied; the message says what to change."""


class _HunkCountError(InvalidDiff):
    """The @@ line counts do not match the hunk's lines (models often miscount; see `_recount`)."""


@dataclass
class FilePatch:
    """One file's part of a diff. Paths are as written (prefix included); None stands for /dev/null."""

    old_path: str | None = None
    new_path: str | None = None
    git_style: bool = False
    header_paths: tuple[str, str] | None = None
    hunks: int = 0
    added: int = 0
    removed: int = 0
    modes: list[str] = field(default_factory=list)
    has_file_lines: bool = False
    start: int = 0  # index of the patch's first line in the diff


@dataclass(frozen=True)
class ValidatedDiff:
    diff: str  # the text that was checked: exactly what gets recorded, shown and applied
    files: list[str]  # repository-relative paths the diff touches, sorted
    strip: int  # the -p level `git apply` needs for these paths
    base: str  # the commit it was checked against
    added: int
    removed: int


def _unquote(text: str) -> str:
    """A path as git writes it: plain, or C-quoted (escapes, octal bytes) when it holds special characters."""
    if not (len(text) >= 2 and text.startswith('"') and text.endswith('"')):
        return text
    body, out, i = text[1:-1], bytearray(), 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            octal = body[i + 1:i + 4]
            if re.fullmatch(r"[0-7]{3}", octal):
                out.append(int(octal, 8) & 0xFF)
                i += 4
            else:
                out += _ESCAPES.get(body[i + 1], body[i + 1]).encode("utf-8")
                i += 2
            continue
        out += ch.encode("utf-8")
        i += 1
    return out.decode("utf-8", "replace")


def _file_header_path(rest: str) -> str | None:
    """The path of a `---`/`+++` line (timestamp after a tab dropped); None for /dev/null."""
    name = rest.split("\t", 1)[0].rstrip("\r")
    if name.startswith('"'):
        name = _unquote(name)
    elif name.endswith(" ") and name.strip():
        name = name.rstrip()
    return None if name == _DEV_NULL else name


def _git_header_paths(rest: str) -> tuple[str, str] | None:
    """The two paths of `diff --git A B` when they can be read unambiguously."""
    rest = rest.rstrip("\r")
    quoted = re.fullmatch(r'("(?:[^"\\]|\\.)*"|\S+) ("(?:[^"\\]|\\.)*"|\S+)', rest)
    if quoted and (rest.startswith('"') or rest.endswith('"')):
        return _unquote(quoted.group(1)), _unquote(quoted.group(2))
    # Unquoted paths may hold spaces: the two halves are the same path with different prefixes.
    half = len(rest) // 2
    if len(rest) % 2 == 1 and rest[half] == " ":
        a, b = rest[:half], rest[half + 1:]
        if a.partition("/")[2] == b.partition("/")[2] or a == b:
            return a, b
    return None


def parse_diff(text: str) -> list[FilePatch]:
    """Split a unified diff into file patches, checking its structure line by line."""
    if not text.strip():
        raise InvalidDiff("the diff is empty")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    patches: list[FilePatch] = []
    cur: FilePatch | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        number = i + 1
        if line.startswith("diff --git "):
            cur = FilePatch(git_style=True, header_paths=_git_header_paths(line[len("diff --git "):]), start=i)
            patches.append(cur)
            i += 1
            continue
        if line.startswith("GIT binary patch") or (line.startswith("Binary files ") and " differ" in line):
            raise InvalidDiff(f"line {number}: binary patches are refused; propose text changes only")
        if cur is not None and cur.git_style and cur.hunks == 0 and not cur.has_file_lines \
                and line.startswith(_GIT_HEADERS):
            _git_header(cur, line.rstrip("\r"))
            i += 1
            continue
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            if cur is None or cur.has_file_lines or cur.hunks or not cur.git_style:
                cur = FilePatch(start=i)
                patches.append(cur)
            cur.old_path = _file_header_path(line[4:])
            cur.new_path = _file_header_path(lines[i + 1][4:])
            cur.has_file_lines = True
            i += 2
            continue
        if line.startswith("@@"):
            if cur is None or not cur.has_file_lines:
                raise InvalidDiff(f"line {number}: a hunk (@@) before its file's ---/+++ header lines")
            i = _hunk(cur, lines, i)
            continue
        if not line.strip():  # blank lines between or after file patches, as git apply allows
            i += 1
            continue
        if cur is not None and cur.hunks and line[:1] in (" ", "+", "-"):
            raise _HunkCountError(f"line {number}: the last hunk before it has more lines than its @@ header counts")
        if line.startswith("```"):
            raise InvalidDiff(f"line {number}: remove the ``` fence; send the bare diff text")
        shown = line if len(line) <= 80 else line[:77] + "..."
        raise InvalidDiff(f"line {number} is not part of a unified diff: {shown!r}")
    if not patches:
        raise InvalidDiff("no file header found: start each file with `--- a/PATH` and `+++ b/PATH` lines "
                          "(or a `diff --git` header)")
    for p in patches:
        if p.hunks == 0 and not p.git_style:
            raise InvalidDiff(f"the patch for {p.new_path or p.old_path} has no hunks")
    return patches


def _git_header(cur: FilePatch, line: str) -> None:
    if line.startswith(("old mode ", "new mode ", "deleted file mode ", "new file mode ")):
        cur.modes.append(line.rsplit(" ", 1)[1])
    elif line.startswith(("rename from ", "copy from ")):
        cur.old_path = "a/" + _unquote(line.split(" ", 2)[2])
    elif line.startswith(("rename to ", "copy to ")):
        cur.new_path = "b/" + _unquote(line.split(" ", 2)[2])


def _hunk(cur: FilePatch, lines: list[str], i: int) -> int:
    """Consume one hunk starting at `lines[i]`; return the index after it."""
    header, start = lines[i], i + 1
    m = _HUNK.match(header)
    if not m:
        raise InvalidDiff(f"line {i + 1}: malformed hunk header {header[:60]!r}; expected '@@ -A,B +C,D @@'")
    old_left = int(m.group(2)) if m.group(2) is not None else 1
    new_left = int(m.group(4)) if m.group(4) is not None else 1
    cur.hunks += 1
    i += 1
    while old_left > 0 or new_left > 0:
        if i >= len(lines):
            raise _HunkCountError(f"the hunk at line {start} ends early: {old_left} old and "
                              f"{new_left} new lines missing (check the counts in its @@ header)")
        line = lines[i]
        kind = line[:1]
        if kind in (" ", "") or line == "\r":  # an empty line is an empty context line, as git reads it
            old_left -= 1
            new_left -= 1
        elif kind == "-":
            old_left -= 1
            cur.removed += 1
        elif kind == "+":
            new_left -= 1
            cur.added += 1
        elif kind == "\\":
            pass
        else:
            raise _HunkCountError(f"line {i + 1}: the hunk at line {start} ends early: {old_left} "
                              f"old and {new_left} new lines missing (check the counts in its @@ header)")
        if old_left < 0 or new_left < 0:
            raise _HunkCountError(f"line {i + 1}: the hunk at line {start} has more lines than its "
                              "@@ header counts")
        i += 1
    while i < len(lines) and lines[i].startswith("\\"):  # "\ No newline at end of file"
        i += 1
    return i


def _ends_hunk(lines: list[str], j: int) -> bool:
    line = lines[j]
    return (line.startswith(("@@", "diff --git ")) or
            (line.startswith("--- ") and j + 1 < len(lines) and lines[j + 1].startswith("+++ ")))


def _recount(diff: str) -> str:
    """`diff` with each hunk's @@ counts recomputed from its lines. A hunk runs to the next hunk or file header;
    trailing blank lines are left out of it. Start lines are kept: git finds a hunk by its context anyway."""
    lines = diff.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        m = _HUNK.match(lines[i])
        if not m:
            out.append(lines[i])
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not _ends_hunk(lines, j) and lines[j][:1] in ("", " ", "+", "-", "\\"):
            j += 1
        body = lines[i + 1:j]
        blanks = 0
        while body and body[-1] == "":
            body.pop()
            blanks += 1
        old = sum(1 for ln in body if ln[:1] in ("", " ", "-"))
        new = sum(1 for ln in body if ln[:1] in ("", " ", "+"))
        rest = lines[i][m.end():]
        out.append(f"@@ -{m.group(1)},{old} +{m.group(3)},{new} @@{rest}")
        out += body + [""] * blanks
        i = j
    return "\n".join(out)


def _context_hint(diff: str) -> str:
    """A hint when a hunk has fewer context lines on one side of its change than on the other: git then anchors
    the hunk to the end (or start) of the file, the usual reason a model's otherwise right diff does not apply."""
    lines = diff.split("\n")
    for i, line in enumerate(lines):
        if not _HUNK.match(line):
            continue
        body: list[str] = []
        for nxt in lines[i + 1:]:
            if nxt[:1] not in (" ", "+", "-", "\\") or nxt.startswith(("--- ", "+++ ")):
                break
            body.append(nxt)
        changed = [k for k, ln in enumerate(body) if ln[:1] in ("+", "-")]
        if not changed:
            continue
        leading, trailing = changed[0], len(body) - 1 - changed[-1]
        if leading != trailing:
            return (f"; note that hunk {line.split('@@')[1].strip()!r} has {leading} context line(s) before "
                    f"its change and {trailing} after: git then pins it to the "
                    f"{'end' if trailing < leading else 'start'} of the file. Give the same number of unchanged "
                    "lines (3 is usual) before and after each change")
    return ""


def _strip_level(patches: list[FilePatch]) -> int:
    olds = [p.old_path for p in patches if p.old_path is not None]
    news = [p.new_path for p in patches if p.new_path is not None]
    for p in patches:
        if p.header_paths is not None and p.old_path is None and p.new_path is None:
            olds.append(p.header_paths[0])
            news.append(p.header_paths[1])
    if all(o.startswith("a/") for o in olds) and all(n.startswith("b/") for n in news):
        return 1
    return 0


def _strip(path: str, level: int) -> str:
    return path.split("/", level)[-1] if level else path


def _patch_paths(p: FilePatch, level: int) -> list[str]:
    old, new = p.old_path, p.new_path
    if old is None and new is None and p.header_paths is not None and not p.has_file_lines:
        old, new = p.header_paths  # a mode change or an empty new file: only the git header names it
    if old is None and new is None:
        raise InvalidDiff("a file patch names no path (both sides are /dev/null)")
    paths = [_strip(x, level) for x in (old, new) if x is not None]
    extra = [_strip(x, level) for x in p.header_paths or () if p.has_file_lines]
    if not p.git_style and len(set(paths)) > 1:
        raise InvalidDiff(f"--- and +++ name different files ({paths[0]} and {paths[1]}); to rename a file use "
                          "a git-style diff with `rename from`/`rename to`")
    # git reads the names of a `diff --git` line too; they are checked like the others.
    return paths + [x for x in extra if x not in paths]


def _check_path(box: Sandbox, path: str) -> str:
    if any(ord(ch) < 32 for ch in path) or unsafe_chars(path):
        raise InvalidDiff(f"the path {path!r} holds control characters")
    if any(part.lower() == ".git" for part in path.replace("\\", "/").split("/")):
        raise InvalidDiff(f"{path}: files under .git cannot be changed")
    try:
        return box.relative(path)
    except SandboxError as exc:
        raise InvalidDiff(f"{path}: {exc}") from None


def _check_head_tree(root: Path, base: str, paths: list[str]) -> None:
    """Refuse symlinks and submodules in HEAD on the way to any path (the working tree may differ from HEAD)."""
    prefixes: set[str] = set()
    for path in paths:
        parts = path.split("/")
        prefixes.update("/".join(parts[: k + 1]) for k in range(len(parts)))
    out = run_git(root, ["ls-tree", "-z", "--full-tree", base, "--", *sorted(prefixes)])
    for entry in filter(None, out.split("\0")):
        meta, _, name = entry.partition("\t")
        mode = meta.split(" ", 1)[0]
        if mode == "120000":
            raise InvalidDiff(f"{name} is a symbolic link in HEAD; changes through or to symlinks are refused")
        if mode == "160000":
            raise InvalidDiff(f"{name} is a submodule; changes inside submodules are refused")


def _check_invisible(root: Path, base: str, diff: str, patches: list[FilePatch], level: int) -> None:
    """Refuse characters that act on a terminal or hide text (ESC, other controls, bidi, zero-width) unless the
    file being changed already holds that character: a line that ends in `ESC[2K ESC[1G` would be invisible at
    the approval prompt while still being committed."""
    if not unsafe_chars(diff):
        return
    lines = diff.split("\n")
    starts = [p.start for p in patches] + [len(lines)]
    if unsafe_chars("\n".join(lines[: starts[0]])):
        raise InvalidDiff("the diff holds control characters before its first file header; remove them")
    for k, p in enumerate(patches):
        found = unsafe_chars("\n".join(lines[p.start: starts[k + 1]]))
        if not found:
            continue
        old = p.old_path if p.old_path is not None else (p.header_paths[0] if p.header_paths and
                                                          not p.has_file_lines else None)
        path = _strip(old, level) if old is not None else None
        held = _blob_text(root, base, path) if path is not None else ""
        missing = sorted(ch for ch in found if ch not in held)
        if missing:
            where = next(n + 1 for n in range(p.start, starts[k + 1]) if any(ch in lines[n] for ch in missing))
            named = ", ".join(describe(ch) for ch in missing)
            target = _strip(p.new_path or old or "?", level)
            raise InvalidDiff(f"line {where}: the diff for {target} holds {named}, a character that moves the "
                              "cursor, controls the terminal or hides text, and the file does not hold it "
                              "already; remove it (write it as an escape in the file's language if it is needed)")


def _blob_text(root: Path, base: str, path: str) -> str:
    try:
        # A file cut at the cap may lose the character it holds: then the diff is refused, never let through.
        return run_git(root, ["cat-file", "blob", f"{base}:{path}"], max_bytes=16_000_000)
    except GitFailed:
        return ""  # no such file at base: a new file holds nothing yet


def git_apply_args(strip: int) -> list[str]:
    """The `git apply` options every check and the final apply share, so they agree on what the diff means."""
    # No --unidiff-zero: every hunk must be anchored on context lines, never on line numbers alone.
    return ["apply", "--cached", f"-p{strip}", "--whitespace=nowarn", "-"]


def _explain(stderr: str) -> str:
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()][:4]
    return "; ".join(lines) or "git apply refused it"


def validate_diff(root: Path, diff: str, *, max_bytes: int = MAX_DIFF_BYTES, max_files: int = MAX_DIFF_FILES,
                  max_lines: int = MAX_DIFF_LINES, base: str = "HEAD") -> ValidatedDiff:
    """Check `diff` against the repository at `root`; raise InvalidDiff saying what is wrong."""
    if "\x00" in diff:
        raise InvalidDiff("the diff holds NUL bytes: binary content is refused")
    if not diff.endswith("\n"):
        diff += "\n"  # git apply needs the last line terminated; the normalised text is what gets recorded
    size = len(diff.encode("utf-8"))
    if size > max_bytes:
        raise InvalidDiff(f"the diff is {size} bytes, over the {max_bytes}-byte cap; propose a smaller change")
    try:
        return _validate(root, diff, max_files=max_files, max_lines=max_lines, base=base)
    except InvalidDiff as first:
        # Counting lines is where models slip most (a wrong count also swallows or drops a trailing line); the
        # content is what matters, and git still checks it against HEAD. The corrected text is what gets
        # recorded, shown and hashed.
        fixed = _recount(diff)
        if fixed == diff:
            raise
        try:
            return _validate(root, fixed, max_files=max_files, max_lines=max_lines, base=base)
        except InvalidDiff as second:
            raise (second if isinstance(first, _HunkCountError) else first) from None


def _validate(root: Path, diff: str, *, max_files: int, max_lines: int, base: str) -> ValidatedDiff:
    patches = parse_diff(diff)
    if len(patches) > max_files:
        raise InvalidDiff(f"the diff touches {len(patches)} files, over the cap of {max_files}")
    added = sum(p.added for p in patches)
    removed = sum(p.removed for p in patches)
    if added + removed > max_lines:
        raise InvalidDiff(f"the diff changes {added + removed} lines, over the cap of {max_lines}")
    for p in patches:
        bad = [m for m in p.modes if m not in _ALLOWED_MODES]
        if bad:
            raise InvalidDiff(f"file mode {bad[0]} is refused (symlinks and submodules cannot be proposed); "
                              "only 100644 and 100755")
    level = _strip_level(patches)
    box = Sandbox(root)
    files = sorted({_check_path(box, path) for p in patches for path in _patch_paths(p, level)})
    try:
        commit = run_git(root, ["rev-parse", "--verify", "--quiet", f"{base}^{{commit}}"]).strip()
    except GitFailed:
        raise InvalidDiff(f"the repository has no commit at {base} to check the diff against") from None
    _check_head_tree(root, commit, files)
    _check_invisible(root, commit, diff, patches, level)
    with temp_index(root, commit) as env:
        try:
            run_git(root, [*git_apply_args(level)[:-1], "--check", "-"], input=diff, env=env)
        except GitFailed as exc:
            raise InvalidDiff(f"the diff does not apply to {base} ({commit[:12]}): {_explain(exc.stderr)}. "
                              "Read the current file with read_file and copy the context lines exactly"
                              + _context_hint(diff)) from None
    return ValidatedDiff(diff=diff, files=files, strip=level, base=commit, added=added, removed=removed)
