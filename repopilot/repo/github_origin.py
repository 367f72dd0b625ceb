"""Which GitHub repository and branch a checkout is: its remotes' URLs and its current branch, read through the
one git runner. `gh` finds a repository the same way (the current branch's upstream remote, else `upstream`,
`github`, `origin`, else the only GitHub remote)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..core import RepoPilotError
from .gitrun import run_git

__all__ = ["GitHubCheckout", "github_checkout", "parse_remote"]

# https://HOST/OWNER/REPO(.git), ssh://git@HOST(:port)/OWNER/REPO(.git), git@HOST:OWNER/REPO(.git)
_URL = re.compile(r"^(?:https?|ssh|git)://(?:[^@/]+@)?(?P<host>[^/:]+)(?::\d+)?/(?P<path>.+?)/?$")
_SCP = re.compile(r"^(?:[^@/]+@)?(?P<host>[^/:]+):(?P<path>[^/].*?)/?$")
_OWNER = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$")
_REPO = re.compile(r"^[A-Za-z0-9._-]{1,100}$")
_PREFERRED = ("upstream", "github", "origin")


@dataclass(frozen=True)
class GitHubCheckout:
    host: str
    owner: str
    repo: str
    branch: str | None  # None: a detached HEAD

    @property
    def slug(self) -> str:
        return f"{self.owner}/{self.repo}"


def parse_remote(url: str) -> tuple[str, str, str] | None:
    """(host, owner, repo) of a remote URL on some host, or None when it names no OWNER/REPO."""
    text = url.strip()
    m = _URL.match(text) or _SCP.match(text)
    if m is None:
        return None
    parts = m.group("path").split("/")
    if len(parts) != 2:
        return None
    owner, repo = parts[0], parts[1].removesuffix(".git")
    if not _OWNER.match(owner) or not _REPO.match(repo) or repo in (".", ".."):
        return None
    return m.group("host").lower(), owner, repo


def _git(cwd: Path, *args: str) -> str | None:
    try:
        return run_git(cwd, list(args), timeout=10.0).strip()
    except (RepoPilotError, OSError):
        return None


def github_checkout(cwd: Path, hosts: tuple[str, ...] = ("github.com",)) -> GitHubCheckout | None:
    """The GitHub repository and branch of the checkout at `cwd`, or None when `cwd` is not a git checkout or
    none of its remotes is on one of `hosts`."""
    if _git(cwd, "rev-parse", "--absolute-git-dir") is None:
        return None
    remotes: dict[str, tuple[str, str, str]] = {}
    for line in (_git(cwd, "config", "--get-regexp", r"^remote\..*\.url$") or "").splitlines():
        key, _, url = line.partition(" ")
        parsed = parse_remote(url)
        if parsed is not None and parsed[0] in hosts:
            remotes[key.removeprefix("remote.").removesuffix(".url")] = parsed
    if not remotes:
        return None
    branch = _git(cwd, "symbolic-ref", "--short", "-q", "HEAD") or None
    upstream = _git(cwd, "config", "--get", f"branch.{branch}.remote") if branch else None
    name = next((n for n in (upstream, *_PREFERRED) if n in remotes), None) or sorted(remotes)[0]
    host, owner, repo = remotes[name]
    return GitHubCheckout(host=host, owner=owner, repo=repo, branch=branch)
