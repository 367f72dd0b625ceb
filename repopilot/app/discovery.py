"""`repopilot diagnose` with no SOURCE inside a GitHub checkout: the latest failed run of the current branch (or
of `--branch`, `--workflow`; or `--run` itself), found through the API as `gh run list --status failure` would
list it first, and diagnosed as its run URL."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from ..ci.runurl import DEFAULT_API_URL
from ..core import InputError
from ..repo.remotes import GitHubCheckout, github_checkout
from .settings import Settings

__all__ = ["Discovery", "discover_run", "discovery_possible"]


@dataclass(frozen=True)
class Discovery:
    """What to look for: all None means the latest failed run of the checkout's current branch."""

    branch: str | None = None
    workflow: str | None = None
    run: int | None = None

    def asked(self) -> bool:
        return any(v is not None for v in (self.branch, self.workflow, self.run))


def _hosts(settings: Settings) -> tuple[str, ...]:
    host = (urlsplit(settings.github_server_url).hostname or "github.com").lower()
    return tuple(dict.fromkeys((host, "github.com")))


def discovery_possible(settings: Settings, cwd: Path) -> GitHubCheckout | None:
    """The checkout to discover a run for, when discovery applies: a GitHub token is configured and `cwd` is a
    git checkout with a GitHub remote. None otherwise."""
    if not settings.github_token:
        return None
    return github_checkout(cwd, _hosts(settings))


def discover_run(settings: Settings, checkout: GitHubCheckout, ask: Discovery) -> str:
    """The run URL to diagnose (InputError when there is no such run)."""
    from ..ci.github_api import GitHubClient  # the HTTP client: only when a run is looked up

    where = f"https://{checkout.host}/{checkout.slug}/actions/runs"
    if ask.run is not None:
        return f"{where}/{ask.run}"
    branch = ask.branch or checkout.branch
    if branch is None:
        raise InputError("HEAD is detached: name the branch whose failed run to diagnose with --branch, or the "
                         "run with --run")
    api = settings.github_api_url or (DEFAULT_API_URL if checkout.host == "github.com" else None)
    if api is None:
        raise InputError(f"{checkout.host} is not github.com: set GITHUB_API_URL to its API "
                         f"(https://{checkout.host}/api/v3) to look up its runs")
    with GitHubClient(settings.github_token, api) as client:
        runs = client.list_runs(checkout.owner, checkout.repo, branch=branch, status="failure",
                                workflow=ask.workflow)
    if not runs:
        wf = f" of workflow {ask.workflow}" if ask.workflow else ""
        raise InputError(f"{checkout.slug}: no failed run{wf} on branch {branch} (pass a log, a run URL or --run)")
    return f"{where}/{runs[0]['id']}"
