"""Git plumbing on a private index file: checking and applying a diff against a commit's tree without touching
the working tree, the real index or the current branch."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .gitrun import run_git

__all__ = ["temp_index"]


@contextmanager
def temp_index(root: Path, commit: str) -> Iterator[dict[str, str]]:
    """An environment whose GIT_INDEX_FILE is a fresh index holding `commit`'s tree, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="repopilot-index-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        run_git(root, ["read-tree", commit], env=env)
        yield env
