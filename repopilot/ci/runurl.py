"""The one parser of GitHub Actions run URLs: `https://HOST/OWNER/REPO/actions/runs/RUN_ID[/attempts/N][/job/ID]`.

Everything that reads a run URL (sources, the diagnosis's run id, `github logs|report`) goes through
`parse_run_url`, so a malformed one (a port out of range, an unclosed `[`, a run id thousands of digits long) is
the same clear input error (exit 2) wherever it is given. Standard library only: importing this must not
import the HTTP client (which is also why `GitHubAccess`, the settings' view of GitHub, lives here).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from ..core import ConfigError, InputError

__all__ = ["DEFAULT_API_URL", "DEFAULT_LOG_CACHE_MB", "GitHubAccess", "RunRef", "is_run_url", "parse_run_url",
           "run_id_of"]

DEFAULT_API_URL = "https://api.github.com"
# GitHub's ids are 64-bit: 20 digits at most. Names follow GitHub's rules for owners and repositories.
_RUN_PATH = re.compile(
    r"^/(?P<owner>[A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))/(?P<repo>[A-Za-z0-9._-]{1,100})/actions/runs/(?P<run>\d{1,20})"
    r"(?:/attempts/(?P<attempt>\d{1,9}))?(?:/jobs?/(?P<job>\d{1,20}))?/?$"
)
_EXAMPLE = "https://github.com/OWNER/REPO/actions/runs/RUN_ID[/job/JOB_ID]"
_SHOWN = 200


@dataclass(frozen=True)
class RunRef:
    """What a run URL points at."""

    host: str
    owner: str
    repo: str
    run_id: int
    job_id: int | None = None
    attempt: int | None = None

    @property
    def slug(self) -> str:
        return f"{self.owner}/{self.repo}"

    @property
    def url(self) -> str:
        url = f"https://{self.host}/{self.slug}/actions/runs/{self.run_id}"
        if self.attempt:
            url += f"/attempts/{self.attempt}"
        if self.job_id:
            url += f"/job/{self.job_id}"
        return url

    def default_api_url(self) -> str:
        """The API for a github.com URL. Any other host could be anyone's: the token is sent there only when the
        user names that API in GITHUB_API_URL (a GitHub Enterprise Server they trust), never because a URL said so."""
        if self.host in ("github.com", "www.github.com"):
            return DEFAULT_API_URL
        raise ConfigError(f"the run URL is on {self.host}, not github.com: RepoPilot sends GITHUB_TOKEN only to "
                          f"api.github.com or to GITHUB_API_URL; for a GitHub Enterprise Server you trust, set "
                          f"GITHUB_API_URL=https://{self.host}/api/v3")


def _refuse(text: str, why: str = "") -> InputError:
    shown = text if len(text) <= _SHOWN else text[:_SHOWN] + "…"
    reason = f"{why}; " if why else ""
    return InputError(f"not a GitHub Actions run URL: {shown!r} ({reason}expected {_EXAMPLE})")


def parse_run_url(url: str) -> RunRef:
    """The run (and job or attempt) `url` names; InputError saying what is wrong otherwise."""
    text = url.strip()
    try:
        parts = urlsplit(text)
        port = parts.port  # raises ValueError out of 0-65535 or not a number
    except ValueError:
        raise _refuse(text, "its host or port is malformed") from None
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise _refuse(text)
    match = _RUN_PATH.match(parts.path)
    if not match or match.group("repo") in (".", ".."):
        run = re.search(r"/actions/runs/(\d+)", parts.path)
        raise _refuse(text, "the run id is too long" if run and len(run.group(1)) > 20 else "")
    attempt = match.group("attempt")
    job = match.group("job")
    host = parts.hostname + (f":{port}" if port else "")
    return RunRef(host=host, owner=match.group("owner"), repo=match.group("repo"), run_id=int(match.group("run")),
                  job_id=int(job) if job else None, attempt=int(attempt) if attempt else None)


def is_run_url(text: str) -> bool:
    """Whether `text` is a run URL `parse_run_url` accepts."""
    try:
        parse_run_url(text)
    except InputError:
        return False
    return True


def run_id_of(source: str) -> str | None:
    """The run id of a SOURCE that is a run URL, else None (a file, stdin, a zip)."""
    try:
        return str(parse_run_url(source).run_id)
    except InputError:
        return None


# A job's log is a few hundred KB to tens of MB: 1 GB keeps the logs of a few hundred runs' failed jobs.
DEFAULT_LOG_CACHE_MB = 1024


@dataclass(frozen=True)
class GitHubAccess:
    """How to reach the GitHub API, as the application layer configured it (this package reads no environment):
    the token (None: anonymous), the API base URL (None: the run URL's own API, api.github.com for github.com),
    a directory to keep downloaded logs in between processes (None: a private temporary directory) and how many
    MB of logs it keeps (the least recently used go first), and one to keep the API's answers in (None: none
    kept; ci/api_cache.py)."""

    token: str | None = field(default=None, repr=False)
    api_url: str | None = None
    log_cache: Path | None = None
    log_cache_mb: int = DEFAULT_LOG_CACHE_MB
    api_cache: Path | None = None
