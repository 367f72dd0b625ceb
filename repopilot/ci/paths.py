"""File paths as the repository knows them. Logs name files the way the runner saw them: under its workspace
(`/home/runner/work/REPO/REPO/src/a.py`, `D:\\a\\REPO\\REPO\\src\\a.py`, `/__w/REPO/REPO/...` in container jobs),
or glued to a runner marker (`##[error]src/a.ts`). GitHub places an annotation only when its `file` is relative
to the repository root, with `/` separators; so every path a report carries is made repository-relative where
it lies in a workspace, and left as it is (absolute) where it does not (a system header, the Go toolchain).
"""

from __future__ import annotations

import re

__all__ = ["is_repo_relative", "repo_relative"]

# Markers the runner or a tool glues in front of a path: `##[error]`, `##[warning]`, `::error::`.
_MARKERS = re.compile(r"^(?:\s*(?:##\[[a-z]+\]|::[a-z]+::))+\s*", re.IGNORECASE)
# Where hosted and self-hosted runners check a repository out: WORKSPACE_ROOT/REPO/REPO/.
_RUNNER_ROOT = re.compile(
    r"^(?:/home/[^/]+/_?work|/Users/[^/]+/_?work|[A-Za-z]:/a|/__w|(?:[A-Za-z]:)?(?:/[^/]+)*/actions-runner/_work)"
    r"/(?P<repo>[^/]+)/(?P=repo)/")
# A Docker container action's workspace is the repository itself.
_CONTAINER_ROOT = "/github/workspace/"
_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")


def repo_relative(path: str | None, workspace: str | None = None) -> str | None:
    """`path` relative to the repository root when it lies in the runner's workspace (or in `workspace`, the
    job's GITHUB_WORKSPACE), without runner markers or `./`; other paths come back unchanged but cleaned."""
    if path is None:
        return None
    cleaned = _MARKERS.sub("", path).strip()
    if _DRIVE.match(cleaned) or ("\\" in cleaned and "/" not in cleaned):
        cleaned = cleaned.replace("\\", "/")  # Windows: GitHub wants `/`
    for root in _workspaces(workspace):
        if cleaned.startswith(root):
            cleaned = cleaned[len(root):]
            break
    else:
        m = _RUNNER_ROOT.match(cleaned)
        if m is not None:
            cleaned = cleaned[m.end():]
        elif cleaned.startswith(_CONTAINER_ROOT):
            cleaned = cleaned[len(_CONTAINER_ROOT):]
    while cleaned.startswith("./"):
        cleaned = cleaned[2:]
    return cleaned or None


def _workspaces(workspace: str | None) -> list[str]:
    if not workspace or not workspace.strip():
        return []
    root = workspace.strip().replace("\\", "/").rstrip("/") + "/"
    return [root] if len(root) > 1 else []


def is_repo_relative(path: str) -> bool:
    """Whether GitHub can place an annotation at `path`: relative, inside the repository, `/` separators."""
    return bool(path) and not path.startswith(("/", "~")) and not _DRIVE.match(path) and "\\" not in path \
        and ".." not in path.split("/")
