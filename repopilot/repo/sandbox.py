"""Confinement to one repository: every path a tool receives is resolved here, and refused if it would leave
the repository root (`..`, absolute paths, symlinks that resolve outside) or reach into `.git/`."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path, PurePosixPath

from ..core import InputError, SandboxError

__all__ = ["GitOutput", "Sandbox", "check_ref", "open_repo", "run_git"]

_GIT_TIMEOUT_S = 30.0
_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/@{}~^-]{0,200}$")
# Repository-local config can name programs git would run (fsmonitor, hooks, external diff, textconv).
# The tools only read, and run nothing a repository chooses.
_SAFE_GIT = ["-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "diff.external=",
             "-c", "core.pager=cat", "-c", "color.ui=false"]
_GIT_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C", "GIT_PAGER": "cat"}


def _no_option(value: str, what: str) -> None:
    if value.startswith("-"):
        raise SandboxError(f"{what} {value!r} looks like a command-line option; refused")


class GitOutput(str):
    """Git's stdout as text, with `truncated` set when it was cut at the byte cap."""

    truncated: bool = False


def run_git(root: Path, args: list[str], *, max_bytes: int = 4_000_000, check: bool = True) -> GitOutput:
    """Run git in `root` with `args` as a list (never a shell), stdout capped at `max_bytes`."""
    env = {**os.environ, **_GIT_ENV}
    try:
        proc = subprocess.Popen(["git", *_SAFE_GIT, *args], cwd=root, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env)
    except FileNotFoundError:
        raise InputError("git is not installed or not on PATH") from None
    assert proc.stdout is not None and proc.stderr is not None
    data = proc.stdout.read(max_bytes + 1)
    truncated = len(data) > max_bytes
    if truncated:
        proc.kill()
    try:
        _, stderr = proc.communicate(timeout=_GIT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise SandboxError(f"git {args[0]} took longer than {_GIT_TIMEOUT_S:.0f}s") from None
    if check and proc.returncode != 0 and not truncated:
        msg = stderr.decode("utf-8", "replace").strip().splitlines()
        raise SandboxError(f"git {args[0]} failed: {msg[-1] if msg else f'exit {proc.returncode}'}")
    result = GitOutput(data[:max_bytes].decode("utf-8", "replace"))
    result.truncated = truncated
    return result


def open_repo(path: Path | str) -> Path:
    """The top-level directory of the git work tree containing `path`."""
    p = Path(path).expanduser()
    if not p.exists():
        raise InputError(f"repository path does not exist: {p}")
    if not p.is_dir():
        raise InputError(f"repository path is not a directory: {p}")
    try:
        top = run_git(p.resolve(), ["rev-parse", "--show-toplevel"]).strip()
    except SandboxError:
        raise InputError(f"not inside a git repository: {p}") from None
    return Path(top).resolve()


def check_ref(root: Path, ref: str) -> str:
    """A ref or revision expression that names a commit; option-shaped or odd text is refused."""
    _no_option(ref, "ref")
    if not _REF.match(ref):
        raise SandboxError(f"not a valid git ref: {ref!r}")
    out = run_git(root, ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"], check=False)
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
