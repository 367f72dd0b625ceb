"""The verification receipt: what was run to check a proposal, what it showed, and what the weakening guard
found. It travels with the proposal into the trace (its own `verification` step) and to the approval, which
refuses a diff or a base commit other than the receipt's. Types only: the repository and application layers
fill them in."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

__all__ = ["CommandRun", "FailingCommand", "GuardHit", "GuardResult", "Outcome", "Receipt", "SetupRun"]

# verified: fails on HEAD as diagnosed, passes with the diff. still_failing: fails with the diff too.
# not_reproduced: HEAD passes here (or fails differently): no fix is claimed. could_not_run: no command, no
# workspace, a time-out on HEAD. blocked: the guard found a weakening and it was not allowed (nothing ran).
Outcome = Literal["verified", "still_failing", "not_reproduced", "could_not_run", "blocked"]


class GuardHit(BaseModel):
    rule: str  # e.g. "skip_added", "assertion_removed", "or_true"
    file: str
    line: str = ""  # the diff line that matched, as written (shown only through the sanitiser)
    why: str = ""


class GuardResult(BaseModel):
    hits: list[GuardHit] = Field(default_factory=list)
    allowed: bool = False  # the person passed --allow-weakening

    @property
    def blocked(self) -> bool:
        return bool(self.hits) and not self.allowed


class FailingCommand(BaseModel):
    """The command a verification runs, and where it came from (never guessed silently)."""

    command: str
    source: str  # "flag --verify-cmd", "config …", "log line 12: ##[group]Run", "log line 40: + trace"
    narrowed_from: str | None = None  # the command as the log showed it, when it was narrowed to the failures
    cwd: str = "."  # relative to the repository root


class SetupRun(BaseModel):
    """The set-up step (installing dependencies) in one workspace: run, or put back from the set-up cache."""

    cache: Literal["hit", "miss", "off"]  # hit: put back, not run; miss: run (and kept); off: caching turned off
    key: str = ""  # sha256 of what it depends on: command, lock and manifest files, tool versions, network
    inputs: list[str] = Field(default_factory=list)  # the lock and manifest files in the key (the first 20)
    exit_code: int | None = None
    timed_out: bool = False
    duration_s: float = 0.0  # running it, or putting it back
    log: str = ""
    kept: str = ""  # after a miss: whether it was kept for the next workspace, or why not


class CommandRun(BaseModel):
    """One run of the command in a disposable workspace."""

    exit_code: int | None = None  # None: it did not finish (time-out) or could not start
    timed_out: bool = False
    duration_s: float = 0.0
    output_sha256: str = ""
    output_bytes: int = 0
    log: str = ""  # the file holding its stdout and stderr, in the run's directory
    category: str = "unknown"  # the re-diagnosis of its output
    causal: list[str] = Field(default_factory=list)  # the re-diagnosis's causal lines (redacted)
    setup: SetupRun | None = None  # the set-up step before it, when there is one


class Receipt(BaseModel):
    outcome: Outcome
    reason: str = ""
    command: FailingCommand | None = None
    base: str = ""  # the commit the workspace was made from
    diff_sha256: str = ""
    before: CommandRun | None = None  # on HEAD
    after: CommandRun | None = None  # with the diff applied
    setup: str | None = None
    network: bool = False  # whether the command could reach the network
    env_sha256: str = ""  # digest of the tool versions below and the environment variable names given
    tools: dict[str, str] = Field(default_factory=dict)
    guard: GuardResult = Field(default_factory=GuardResult)
    duration_s: float = 0.0  # the whole verification (workspaces, set-up, both runs, re-diagnosis)
