"""`repopilot diagnose` with no SOURCE inside a GitHub checkout: the latest failed run of the current branch (or
of `--branch`, `--workflow`; or `--run` itself), found through the API as `gh run list --status failure` would
list it first, and diagnosed as its run URL."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ..ci import parse_run_url
from ..core import InputError
from .settings import Settings

if TYPE_CHECKING:  # git and the HTTP client are imported only when a run is looked up
    from ..repo import GitHubCheckout

__all__ = ["DiscoveredRun", "Discovery", "discover_run"]


@dataclass(frozen=True)
class Discovery:
    """What to look for: all None means the latest failed run of the checkout's current branch."""

    branch: str | None = None
    workflow: str | None = None
    run: int | None = None

    def asked(self) -> bool:
        return any(v is not None for v in (self.branch, self.workflow, self.run))


@dataclass(frozen=True)
class DiscoveredRun:
    url: str
    what: str  # how it was found, to tell the person ("the latest failed run of octo/demo on branch main")


def _hosts(settings: Settings) -> tuple[str, ...]:
    host = (urlsplit(settings.github_server_url).hostname or "github.com").lower()
    return tuple(dict.fromkeys((host, "github.com")))


def discover_run(settings: Settings, cwd: Path, ask: Discovery) -> DiscoveredRun | None:
    """The run to diagnose when no SOURCE is given, or None when discovery does not apply: no GitHub token is
    configured, or `cwd` is not a git checkout with a GitHub remote. InputError when it applies but finds no
    run."""
    if not settings.github_token:
        return None
    from ..repo import github_checkout

    checkout = github_checkout(cwd, _hosts(settings))
    if checkout is None:
        return None
    where = f"https://{checkout.host}/{checkout.slug}/actions/runs"
    if ask.run is not None:
        return DiscoveredRun(f"{where}/{ask.run}", f"run {ask.run} of {checkout.slug}")
    branch = ask.branch or checkout.branch
    if branch is None:
        raise InputError("HEAD is detached: name the branch whose failed run to diagnose with --branch, or the "
                         "run with --run")
    run_id = _latest_failed(settings, checkout, branch, ask.workflow)
    wf = f" of workflow {ask.workflow}" if ask.workflow else ""
    return DiscoveredRun(f"{where}/{run_id}", f"the latest failed run{wf} of {checkout.slug} on branch {branch}")


def _latest_failed(settings: Settings, checkout: GitHubCheckout, branch: str, workflow: str | None) -> int:
    from ..ci import GitHubClient  # the HTTP client: only when a run is looked up

    # The token goes only to api.github.com or the API the user configured (the run URL parser's one rule).
    api = settings.github_api_url or parse_run_url(f"https://{checkout.host}/{checkout.slug}/actions/runs/1"
                                                   ).default_api_url()
    with GitHubClient(settings.github_token, api) as client:
        runs = client.list_runs(checkout.owner, checkout.repo, branch=branch, status="failure", workflow=workflow)
    if not runs:
        wf = f" of workflow {workflow}" if workflow else ""
        raise InputError(f"{checkout.slug}: no failed run{wf} on branch {branch} (pass a log, a run URL or --run)")
    return int(runs[0]["id"])
