"""Git plumbing on a private index file: checking and applying a diff against a commit's tree without touching
the working tree, the real index or the current branch."""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from ..core import InputError, SandboxError
from .sandbox import _GIT_ENV, _SAFE_GIT  # one definition of the safe git invocation

__all__ = ["GitFailed", "git", "temp_index"]

_TIMEOUT_S = 60.0


class GitFailed(SandboxError):
    """A git command exited non-zero; `stderr` holds its message for callers that explain it."""

    def __init__(self, message: str, stderr: str) -> None:
        super().__init__(message)
        self.stderr = stderr


def git(root: Path, args: list[str], *, input: str | None = None, env: Mapping[str, str] | None = None) -> str:
    """Run git with list arguments (never a shell), optional stdin and extra environment; return stdout."""
    full_env = {**os.environ, **_GIT_ENV, **(env or {})}
    try:
        proc = subprocess.run(["git", *_SAFE_GIT, *args], cwd=root, input=(input or "").encode("utf-8"),
                              capture_output=True, env=full_env, timeout=_TIMEOUT_S, check=False)
    except FileNotFoundError:
        raise InputError("git is not installed or not on PATH") from None
    except subprocess.TimeoutExpired:
        raise SandboxError(f"git {args[0]} took longer than {_TIMEOUT_S:.0f}s") from None
    if proc.returncode != 0:
        stderr = proc.stderr.decode("utf-8", "replace").strip()
        last = stderr.splitlines()[-1] if stderr else f"exit {proc.returncode}"
        raise GitFailed(f"git {args[0]} failed: {last}", stderr)
    return proc.stdout.decode("utf-8", "replace")


@contextmanager
def temp_index(root: Path, commit: str) -> Iterator[dict[str, str]]:
    """An environment whose GIT_INDEX_FILE is a fresh index holding `commit`'s tree, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="repopilot-index-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        git(root, ["read-tree", commit], env=env)
        yield env
