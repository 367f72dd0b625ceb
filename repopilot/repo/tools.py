"""The read-only repository tools the agent may call. Each is confined by the Sandbox and bounded in output."""

from __future__ import annotations

import fnmatch
import re
import time
from pathlib import Path
from typing import BinaryIO

from ..core import SandboxError, Tool, ToolContext, tool
from .gitrun import GitOutput, run_git
from .sandbox import Sandbox, check_ref

__all__ = ["MAX_FILE_BYTES", "MAX_LINE_BYTES", "MAX_RESULT_BYTES", "TOOL_SECONDS", "repo_tools"]

MAX_FILE_BYTES = 1_000_000
# What one tool result may hold, and one line of it: a result goes whole into the trace, so a 200 MB line must
# never be read into memory, let alone recorded.
MAX_RESULT_BYTES = 200_000
MAX_LINE_BYTES = 2_000
# The longest one tool call may run (a git child is killed at this limit, or at the run's deadline if sooner).
TOOL_SECONDS = 30.0
_BINARY_SNIFF = 8192
_MAX_LINES_PER_READ = 2000
_SKIP_CHUNK = 1 << 16


def _looks_binary(chunk: bytes) -> bool:
    return b"\x00" in chunk


def _read_line(fh: BinaryIO, cap: int, end: float) -> tuple[bytes, bool]:
    """The next line, at most `cap` bytes of it, and whether it was longer (the rest is skipped, never held)."""
    raw = fh.readline(cap + 1)
    if len(raw) <= cap or raw.endswith(b"\n"):
        return raw, False
    while True:
        if time.monotonic() > end:
            raise SandboxError("read_file was stopped: it ran out of time skipping a very long line")
        chunk = fh.readline(_SKIP_CHUNK)
        if not chunk or chunk.endswith(b"\n"):
            return raw[:cap], True


def repo_tools(root: Path, *, tool_seconds: float = TOOL_SECONDS, max_result_bytes: int = MAX_RESULT_BYTES,
               max_line_bytes: int = MAX_LINE_BYTES) -> list[Tool]:
    """The six read-only tools bound to the repository at `root`. Each call ends within `tool_seconds` (or the
    run's deadline), returns at most `max_result_bytes`, and shows at most `max_line_bytes` of any line."""
    box = Sandbox(root)

    def deadline(ctx: ToolContext | None) -> float | None:
        return ctx.deadline if ctx is not None else None

    def git(args: list[str], ctx: ToolContext | None, *, check: bool = True) -> GitOutput:
        return run_git(box.root, args, check=check, max_bytes=max_result_bytes, timeout=tool_seconds,
                       deadline=deadline(ctx))

    def ends(ctx: ToolContext | None) -> float:
        limit = time.monotonic() + tool_seconds
        return min(limit, ctx.deadline) if ctx is not None and ctx.deadline is not None else limit

    @tool
    def git_status(ctx: ToolContext | None = None) -> str:
        """Show the working tree status: the current branch and changed, staged and untracked files."""
        return git(["status", "--porcelain=v1", "--branch", "--untracked-files=normal"], ctx) or "clean"

    @tool
    def git_diff(staged: bool = False, ref: str | None = None, path: str | None = None,
                 ctx: ToolContext | None = None) -> str:
        """Show changes as a unified diff: unstaged changes by default.

        Args:
            staged: Show the staged changes (the index against HEAD) instead.
            ref: Compare the working tree against this commit, branch or tag instead (e.g. HEAD~1, main).
            path: Limit the diff to this file or directory.
        """
        args = ["diff", "--no-ext-diff", "--no-textconv", "--no-color"]
        if staged:
            args.append("--cached")
        if ref:
            args.append(check_ref(box.root, ref, timeout=tool_seconds, deadline=deadline(ctx)))
        args.append("--")
        if path:
            args.append(box.relative(path))
        out = git(args, ctx)
        note = f"\n[diff cut at {max_result_bytes} bytes]" if out.truncated else ""
        return (out or "no differences") + note

    @tool
    def git_log(max_count: int = 20, path: str | None = None, ref: str | None = None,
                ctx: ToolContext | None = None) -> str:
        """Show recent commits (hash, date, author, subject), newest first.

        Args:
            max_count: How many commits, at most 200.
            path: Only commits touching this file or directory.
            ref: Start from this commit, branch or tag instead of HEAD.
        """
        if not 1 <= max_count <= 200:
            raise SandboxError("max_count must be between 1 and 200")
        args = ["log", f"--max-count={max_count}", "--no-color", "--no-show-signature", "--format=%h %ad %an%n    %s",
                "--date=short"]
        if ref:
            args.append(check_ref(box.root, ref, timeout=tool_seconds, deadline=deadline(ctx)))
        args.append("--")
        if path:
            args.append(box.relative(path))
        return git(args, ctx, check=False) or "no commits"

    @tool
    def read_file(path: str, start_line: int | None = None, end_line: int | None = None,
                  ctx: ToolContext | None = None) -> str:
        """Read a text file of the repository, with line numbers.

        Args:
            path: The file, relative to the repository root.
            start_line: First line to show (1-based). Default: the start.
            end_line: Last line to show (inclusive). Default: 2000 lines after the start.
        """
        target = box.resolve(path)
        rel = box.relative(path)
        if target.is_dir():
            raise SandboxError(f"{rel} is a directory; use list_files")
        if not target.is_file():
            raise SandboxError(f"no such file: {rel}")
        size = target.stat().st_size
        with target.open("rb") as fh:
            head = fh.read(_BINARY_SNIFF)
        if _looks_binary(head):
            return f"[{rel} is a binary file of {size} bytes; its contents are not shown]"
        first = max(1, start_line or 1)
        last = end_line if end_line is not None else first + _MAX_LINES_PER_READ - 1
        if last < first:
            raise SandboxError(f"end_line {last} is before start_line {first}")
        if size > MAX_FILE_BYTES and start_line is None and end_line is None:
            return (f"[{rel} is {size} bytes, over the {MAX_FILE_BYTES}-byte cap for a whole read; ask for a "
                    "line range with start_line and end_line, or use search_code]")
        last = min(last, first + _MAX_LINES_PER_READ - 1)
        with target.open("rb") as fh:
            shown, total, cut = _numbered(fh, first, last, max_line_bytes, max_result_bytes, ends(ctx))
        if not shown:
            return f"[{rel} has {total} lines; nothing in {first}-{last}]"
        notes = []
        if cut:
            notes.append(f"[lines longer than {max_line_bytes} bytes are cut]")
        if total == -1:
            notes.append(f"[more lines after {first + len(shown) - 1}]")
        return "\n".join([*shown, *notes])

    @tool
    def list_files(path: str = ".", glob: str = "*", max_results: int = 300, ctx: ToolContext | None = None) -> str:
        """List files tracked or added in the repository (ignored files are left out).

        Args:
            path: Directory to list, relative to the repository root.
            glob: Shell pattern on the file name (e.g. "*.py"), or on the path when it holds a "/"
                (e.g. "src/**/test_*.py").
            max_results: At most this many paths (1-2000).
        """
        if not 1 <= max_results <= 2000:
            raise SandboxError("max_results must be between 1 and 2000")
        rel = box.relative(path)
        if not box.resolve(path).is_dir():
            raise SandboxError(f"not a directory: {rel}")
        args = ["ls-files", "--cached", "--others", "--exclude-standard", "--deduplicate", "-z", "--", rel]
        names = [n for n in git(args, ctx).split("\0") if n]
        matched = [n for n in names if fnmatch.fnmatch(n if "/" in glob else n.rsplit("/", 1)[-1], glob)]
        if not matched:
            return f"no files match {glob!r} under {rel}"
        extra = f"\n[{len(matched) - max_results} more not shown]" if len(matched) > max_results else ""
        return "\n".join(matched[:max_results]) + extra

    @tool
    def search_code(pattern: str, path: str = ".", max_results: int = 100, ignore_case: bool = False,
                    fixed_string: bool = False, ctx: ToolContext | None = None) -> str:
        """Search file contents (tracked and untracked, not ignored) with a regular expression; returns file:line:
        text.

        Args:
            pattern: An extended regular expression (or a plain string with fixed_string).
            path: Directory or file to search, relative to the repository root.
            max_results: At most this many matching lines (1-1000).
            ignore_case: Match case-insensitively.
            fixed_string: Treat the pattern as a literal string.
        """
        if not pattern:
            raise SandboxError("pattern is empty")
        if not 1 <= max_results <= 1000:
            raise SandboxError("max_results must be between 1 and 1000")
        if not fixed_string:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise SandboxError(f"invalid regular expression: {exc}") from None
        rel = box.relative(path)
        # The pattern goes after -e, so one that starts with "-" is searched for, never read as an option.
        args = ["grep", "-n", "-I", "--no-color", "--untracked", "-F" if fixed_string else "-E"]
        if ignore_case:
            args.append("-i")
        args += ["-e", pattern, "--", rel]
        out = git(args, ctx, check=False)
        lines = [ln if len(ln) <= 400 else ln[:400] + "…" for ln in out.splitlines()]
        if not lines:
            return f"no matches for {pattern!r} under {rel}"
        extra = f"\n[{len(lines) - max_results} more matches not shown]" if len(lines) > max_results else ""
        return "\n".join(lines[:max_results]) + extra

    return [git_status, git_diff, git_log, read_file, list_files, search_code]


def _numbered(fh: BinaryIO, first: int, last: int, line_cap: int, byte_cap: int,
              end: float) -> tuple[list[str], int, bool]:
    """Lines `first`..`last` with their numbers, streamed: (shown, line count or -1 when more follow, any cut)."""
    shown: list[str] = []
    used = 0
    number = 0
    any_cut = False
    while True:
        if time.monotonic() > end:
            raise SandboxError(f"read_file was stopped at line {number}: it ran out of time")
        raw, cut = _read_line(fh, line_cap, end)
        if not raw:
            return shown, number, any_cut
        number += 1
        if number < first:
            continue
        if number > last or used >= byte_cap:
            return shown, -1, any_cut
        text = raw.decode("utf-8", "replace").rstrip("\n").rstrip("\r")
        any_cut = any_cut or cut
        shown.append(f"{number:>6}  {text}" + (" …" if cut else ""))
        used += len(shown[-1]) + 1
