"""The only place RepoPilot talks to a git remote: the service fetches a pull request's head to work on, and
the hand-off (`approve --push`, the service's approval) pushes the branch of an approved fix. Everything else
stays local (`gitrun` forbids every protocol by default).

The installation token travels as an HTTP header set through git's environment (GIT_CONFIG_*), never in a URL,
an argument (the process list) or the repository's config. https and local (file) remotes are allowed; an ssh
remote only for a push without a token (the person's own key, with their own `ssh`: the repository's
`core.sshCommand` is overridden, since its config could name any program)."""

from __future__ import annotations

import base64
import re
from pathlib import Path

from ..core import InputError
from .gitrun import GitFailed, run_git

__all__ = ["check_push_url", "checkout_pull_request", "fetch_branch", "push_branch", "remote_url"]

_FETCH_TIMEOUT = 300.0


_SCP = re.compile(r"^[^/:@]+@[^/:]+:")  # git@github.com:owner/repo.git
_LOCAL = ("file://", "/", "./", "../")


def _is_ssh(url: str) -> bool:
    return url.startswith("ssh://") or bool(_SCP.match(url))


def _config(url: str, token: str | None, *, ssh: bool = False) -> dict[str, str]:
    if ssh and token is None and _is_ssh(url):
        return {"protocol.ssh.allow": "always", "core.sshCommand": "ssh"}
    if not url.startswith(("https://", *_LOCAL)):
        scheme = "ssh" if _is_ssh(url) else url.split("://", maxsplit=1)[0] if "://" in url else "non-URL"
        allowed = "https, ssh (without a token) and local" if ssh else "https and local"
        raise InputError(f"refusing to use a {scheme} remote: only {allowed} remotes are used")
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


def push_branch(root: Path, url: str, branch: str, *, token: str | None = None, commit: str | None = None) -> None:
    """Push `commit` (default: local `branch`) to `branch` on the remote; never forced (a different commit there
    fails), no hooks run. An ssh remote is allowed when no token is given."""
    source = commit or f"refs/heads/{branch}"
    run_git(root, ["push", "-q", "--no-verify", "--", url, f"{source}:refs/heads/{branch}"],
            config=_config(url, token, ssh=True), timeout=_FETCH_TIMEOUT)


def check_push_url(url: str) -> None:
    """InputError when `push_branch` would refuse `url` without a token (asked before anything is done)."""
    _config(url, None, ssh=True)


def remote_url(root: Path, remote: str, *, push: bool = False) -> str | None:
    """The URL of the repository's remote `remote` (the one it pushes to with `push`); None when there is none."""
    try:
        url = run_git(root, ["remote", "get-url", *(["--push"] if push else []), "--", remote], timeout=10.0)
    except GitFailed:
        return None
    return url.strip() or None
