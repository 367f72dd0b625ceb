"""Confinement to one repository: every path a tool receives is resolved here, and refused if it would leave
the repository root (`..`, absolute paths, symlinks that resolve outside) or reach into `.git/`."""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath

from ..core import InputError, SandboxError
from .gitrun import DEFAULT_GIT_TIMEOUT_S, run_git

__all__ = ["Sandbox", "check_ref", "open_repo"]

_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/@{}~^-]{0,200}$")


def _no_option(value: str, what: str) -> None:
    if value.startswith("-"):
        raise SandboxError(f"{what} {value!r} looks like a command-line option; refused")


def open_repo(path: Path | str) -> Path:
    """The top of the work tree holding `path`: the nearest directory at or above it with a `.git` entry.

    Found on disk, never asked of git: a repository's `core.worktree` (or `GIT_WORK_TREE` in the environment)
    could otherwise move the root anywhere, `/` included, and every tool would then read outside the repository.
    """
    p = Path(path).expanduser()
    if not p.exists():
        raise InputError(f"repository path does not exist: {p}")
    if not p.is_dir():
        raise InputError(f"repository path is not a directory: {p}")
    start = p.resolve()
    top = next((d for d in (start, *start.parents) if (d / ".git").exists()), None)
    if top is None:
        raise InputError(f"not inside a git repository: {p}")
    try:
        run_git(top, ["rev-parse", "--git-dir"])
    except SandboxError:
        raise InputError(f"not inside a git repository: {p}") from None
    return top


def check_ref(root: Path, ref: str, *, timeout: float = DEFAULT_GIT_TIMEOUT_S, deadline: float | None = None) -> str:
    """A ref or revision expression that names a commit; option-shaped or odd text is refused."""
    _no_option(ref, "ref")
    if not _REF.match(ref):
        raise SandboxError(f"not a valid git ref: {ref!r}")
    out = run_git(root, ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"], check=False,
                  timeout=timeout, deadline=deadline)
    if not out.strip():
        raise SandboxError(f"unknown git ref: {ref!r}")
    return ref


class Sandbox:
    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def relative(self, path: str) -> str:
        """`path` checked and normalised to a POSIX path relative to the root ('.' for the root itself)."""
        if not isinstance(path, str) or "\x00" in path:
            raise SandboxError("path must be text without NUL bytes")
        raw = path.strip() or "."
        _no_option(raw, "path")
        if os.path.isabs(raw) or raw.startswith("~") or re.match(r"^[A-Za-z]:[\\/]", raw):
            raise SandboxError(f"absolute paths are refused; give a path relative to the repository: {raw!r}")
        parts = PurePosixPath(raw.replace("\\", "/")).parts
        if ".." in parts:
            raise SandboxError(f"'..' is refused: paths must stay inside the repository: {raw!r}")
        if any(part == ".git" for part in parts):
            raise SandboxError(f".git internals are not readable: {raw!r}")
        rel = PurePosixPath(*parts) if parts else PurePosixPath(".")
        resolved = (self.root / rel).resolve()
        if resolved != self.root and self.root not in resolved.parents:
            raise SandboxError(f"{raw!r} resolves outside the repository (a symlink?); refused")
        inside = resolved.relative_to(self.root)
        if inside.parts and inside.parts[0] == ".git":
            raise SandboxError(f"{raw!r} resolves into .git internals; refused")
        return str(rel)

    def resolve(self, path: str) -> Path:
        """The absolute path for `path`, after the checks of `relative`."""
        return (self.root / self.relative(path)).resolve()
