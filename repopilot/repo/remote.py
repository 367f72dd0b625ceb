"""The only place RepoPilot talks to a git remote: the service fetches a pull request's head to work on, and
pushes the branch of an approved fix. Everything else stays local (`gitrun` forbids every protocol by default).

The installation token travels as an HTTP header set through git's environment (GIT_CONFIG_*), never in a URL,
an argument (the process list) or the repository's config. Only https and local (file) remotes are allowed."""

from __future__ import annotations

import base64
from pathlib import Path

from ..core import InputError
from .gitrun import GitFailed, run_git

__all__ = ["checkout_pull_request", "fetch_branch", "push_branch"]

_FETCH_TIMEOUT = 300.0


def _config(url: str, token: str | None) -> dict[str, str]:
    if not url.startswith(("https://", "file://", "/")):
        scheme = url.split("://", maxsplit=1)[0]
        raise InputError(f"refusing to use a {scheme} remote: only https and local remotes are used")
    config = {"protocol.https.allow": "always", "protocol.file.allow": "always"}
    if token and url.startswith("https://"):
        basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
        config["http.extraHeader"] = f"Authorization: Basic {basic}"
    return config


def checkout_pull_request(root: Path, url: str, number: int, branch: str, *, token: str | None = None) -> str:
    """A fresh repository in `root` with pull request `number`'s head checked out as local `branch`; returns the
    head commit. `refs/pull/N/head` is where GitHub keeps every PR's head, forks' included."""
    root.mkdir(parents=True, exist_ok=True)
    run_git(root, [f"--git-dir={root / '.git'}", "init", "-q"])  # git init refuses --work-tree alone
    run_git(root, ["fetch", "-q", "--no-tags", url, f"+refs/pull/{number}/head:refs/remotes/pr/head"],
            config=_config(url, token), timeout=_FETCH_TIMEOUT)
    run_git(root, ["checkout", "-q", "-B", branch, "refs/remotes/pr/head"])
    return run_git(root, ["rev-parse", "HEAD"]).strip()


def fetch_branch(root: Path, url: str, branch: str, *, token: str | None = None) -> bool:
    """Fetch `branch` from the remote into the same local branch when it exists there; False when it does not."""
    try:
        run_git(root, ["fetch", "-q", "--no-tags", url, f"+refs/heads/{branch}:refs/heads/{branch}"],
                config=_config(url, token), timeout=_FETCH_TIMEOUT)
    except GitFailed as exc:
        if "couldn't find remote ref" in exc.stderr.lower():
            return False
        raise
    return True


def push_branch(root: Path, url: str, branch: str, *, token: str | None = None) -> None:
    """Push local `branch` to the same branch on the remote; never forced (a different commit there fails)."""
    run_git(root, ["push", "-q", url, f"refs/heads/{branch}:refs/heads/{branch}"], config=_config(url, token),
            timeout=_FETCH_TIMEOUT)
