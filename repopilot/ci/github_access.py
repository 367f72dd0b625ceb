"""How to reach the GitHub API: plain data, so reading the settings does not import the HTTP client
(`github_api` does, when a run URL is actually fetched)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["GitHubAccess"]


@dataclass(frozen=True)
class GitHubAccess:
    """How to reach the GitHub API, as the application layer configured it (this package reads no environment):
    the token (None: anonymous), the API base URL (None: the run URL's own API, api.github.com for github.com),
    and a directory to keep downloaded logs in between processes (None: a private temporary directory)."""

    token: str | None = field(default=None, repr=False)
    api_url: str | None = None
    log_cache: Path | None = None
