"""`repopilot fix SOURCE`, `approve RUN_ID`, `reject RUN_ID` and `resume RUN_ID`.

`fix` diagnoses SOURCE, lets the fix agent read the repository and propose a diff, and shows it with its sha256.
Approval fails closed: a terminal gets a y/N question (default No); without a terminal and without `--yes`
nothing is applied and the command exits 3 with the exact `approve` command. `approve` applies exactly the
recorded diff, checked by sha256, as one commit on branch `repopilot/<run_id>`; the working tree, the index and
the current branch are never touched and nothing is pushed unless `--push` or `--pr` asks (app/handoff.py).
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

import typer

from ..app import (
    ApprovalOutcome,
    DiagnosisReport,
    FixOutcome,
    HandOff,
    RejectOutcome,
    approve_run,
    hand_off,
    load_proposal,
    receipt_lines,
    receipt_markdown,
    receipts_of,
    reject_run,
    remote_target,
    resume_run,
    start_fix,
    who_am_i,
)
from ..core import DEFAULT_MAX_STEPS, Proposal, RunError, RunTrace, UsageError, load_trace, redact_text
from .console import diff_view, err, out
from .context import settings_from
from .github import write_summary
from .render import render_text
from .session import reporting, summaries

__all__ = ["register"]


def _stdin_is_terminal() -> bool:
    return sys.stdin.isatty()


# -- showing ------------------------------------------------------------------------------------------------

def _show_diagnosis(reports: Sequence[DiagnosisReport]) -> None:
    """The same report `repopilot diagnose` prints, then what part of the log the model is given."""
    for report in reports:
        typer.echo(render_text([report]), nl=False)
        ranges = ", ".join(f"{a}-{b}" for a, b in report.excerpt.ranges)
        if ranges:
            out.print(f"  excerpt given to the model: log lines {ranges}", markup=False)


def _show_proposal(proposal: Proposal) -> None:
    out.print("\n[bold]Proposed fix[/bold]")
    # What the model wrote can repeat a key it read; the trace is redacted when written, the screen here.
    out.print(redact_text(proposal.explanation), markup=False)
    out.print("")
    out.print(diff_view(redact_text(proposal.diff)))
    if proposal.receipt is not None:
        # Above the sha256, so nothing stands between the sha256 and the y/N question.
        for line in receipt_lines(proposal.receipt):
            out.print(redact_text(line), markup=False)
        out.print("")
    out.print(f"files: {', '.join(proposal.files)}", markup=False)
    out.print(f"sha256: {proposal.sha256}", markup=False)


def _show_refused(trace: RunTrace) -> None:
    """The proposals verification refused (weakening, or still failing), so a person sees why there is no fix."""
    for number, _call, receipt in receipts_of(trace):
        if receipt.outcome in ("blocked", "still_failing"):
            err.print(f"\nProposal refused at step {number}:", markup=False)
            for line in receipt_lines(receipt):
                err.print(redact_text(line), markup=False)


def _approve_command(run_id: str, root: Path | str | None, sha256: str) -> str:
    repo = f" --repo {shlex.quote(str(root))}" if root else ""
    return f"repopilot approve {run_id}{repo} --sha256 {sha256}"


def _say_approved(done: ApprovalOutcome, run_id: str) -> None:
    p = done.proposal
    if done.applied is None:
        out.print(f"Run {run_id} is already approved: branch {p.branch} (commit {(p.commit or '')[:12]}). "
                  "Nothing to do.", markup=False)
        return
    a = done.applied
    out.print(f"Approved by {p.decided_by}: applied as commit {a.commit[:12]} on branch [bold]{a.branch}[/bold] "
              f"(from {a.base[:12]}). Your working tree, index and current branch are untouched; nothing was "
              "pushed.")


def _say_rejected(done: RejectOutcome, run_id: str) -> None:
    if done.already:
        out.print(f"Run {run_id} is already rejected. Nothing to do.", markup=False)
    else:
        out.print(f"Rejected by {done.proposal.decided_by}; nothing was applied.", markup=False)


# -- the approval gate ----------------------------------------------------------------------------------------

def _conclude(done: FixOutcome, *, yes: bool) -> None:
    """After the agent stopped: the approval gate, or the answer, or a clear failure."""
    t, root = done.trace, done.root
    if t.status == "awaiting_approval":
        proposal = load_proposal(t)
        _show_proposal(proposal)
        if yes:
            _say_approved(approve_run(t.run_id, repo=root, sha256=proposal.sha256, who=f"{who_am_i()} (--yes)"),
                          t.run_id)
            return
        if _stdin_is_terminal():
            try:
                ok = typer.confirm(f"Apply this diff as one commit on a new branch repopilot/{t.run_id}?",
                                   default=False)
            except typer.Abort:  # Ctrl-C or end of input at the prompt: no answer is not a yes
                ok = None
            if ok:
                _say_approved(approve_run(t.run_id, repo=root, sha256=proposal.sha256), t.run_id)
                return
            if ok is False:
                _say_rejected(reject_run(t.run_id, reason="declined at the prompt"), t.run_id)
                return
        err.print(f"Awaiting approval; nothing was applied. Run id: {t.run_id}", markup=False)
        err.print("To apply it:  " + _approve_command(t.run_id, root, proposal.sha256), markup=False)
        err.print(f"To reject it: repopilot reject {t.run_id} --reason TEXT", markup=False)
        raise typer.Exit(3)
    if t.status.startswith("failed"):
        _show_refused(t)
        raise RunError(f"run {t.run_id} ended without a fix ({t.status}): {t.answer or 'see the trace'}")
    out.print(redact_text(t.answer or f"(no answer; status {t.status})"), markup=False)
    if t.status != "approved" and not (t.proposal and Proposal.model_validate(t.proposal).decision):
        out.print(f"No fix was proposed (status {t.status}).", markup=False)


# -- commands -------------------------------------------------------------------------------------------------

def fix(
    source: str = typer.Argument(..., help="The failing CI log: a file, - for stdin, a run-logs .zip or a run URL."),
    repo: Path = typer.Option(Path("."), "--repo", help="The git repository to fix."),
    yes: bool = typer.Option(False, "--yes", help="Approve the proposed diff without asking (explicit consent)."),
    max_steps: int | None = typer.Option(None, "--max-steps", min=1, show_default=False,
                                         help=f"Model calls before a final answer is forced (default "
                                              f"{DEFAULT_MAX_STEPS})."),
    no_llm_diagnosis: bool = typer.Option(False, "--no-llm-diagnosis",
                                          help="Diagnose with the rules only, never escalating to the model."),
    baseline: str | None = typer.Option(None, "--baseline", help="The passing log of the same job."),
    verify_cmd: str | None = typer.Option(None, "--verify-cmd", help="The command that shows the failure "
                                          "(default: the failing step's command from the log)."),
    verify_setup: str | None = typer.Option(None, "--verify-setup", help="A set-up command run in each "
                                            "verification workspace before the command (install dependencies); "
                                            "cached across runs by its lock files (--no-setup-cache)."),
    verify_timeout: float | None = typer.Option(None, "--verify-timeout", min=1, show_default=False,
                                                help="Seconds each verification command may take (default 600)."),
    no_setup_cache: bool = typer.Option(False, "--no-setup-cache", help="Run --verify-setup in every workspace "
                                        "instead of putting back a kept set-up with the same lock files."),
    no_verify: bool = typer.Option(False, "--no-verify", help="Do not run the failing command to check a "
                                   "proposal (the weakening guard still applies)."),
    allow_network: bool = typer.Option(False, "--allow-network", help="Let the verification command reach the "
                                       "network (off by default where the machine allows it)."),
    allow_weakening: bool = typer.Option(False, "--allow-weakening", help="Let through a proposal that skips, "
                                         "deletes or loosens tests or silences a check (it is still shown)."),
    summary_file: Path | None = typer.Option(None, "--summary-file", envvar="GITHUB_STEP_SUMMARY",
                                             help="Markdown file to append the proposal's receipt to (default "
                                                  "$GITHUB_STEP_SUMMARY; none when unset)."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="The whole run summary, even without model calls."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No run summary at the end."),
) -> None:
    """Diagnose a failing CI log, then propose a fix as a diff that you approve before anything is applied."""
    settings = settings_from(max_steps=max_steps, verify_cmd=verify_cmd, verify_setup=verify_setup,
                             verify_timeout=verify_timeout, verify=False if no_verify else None,
                             verify_setup_cache=False if no_setup_cache else None,
                             verify_network=True if allow_network else None,
                             allow_weakening=True if allow_weakening else None)
    # The summary comes after the approval question: nothing stands between the diff and the y/N.
    with summaries(verbose=verbose, quiet=quiet):
        done = start_fix(source, settings, repo=repo, baseline=baseline, no_llm_diagnosis=no_llm_diagnosis,
                         observer=reporting, on_diagnosis=_show_diagnosis)
        if summary_file is not None:
            write_summary(summary_file, redact_text(receipt_markdown(done.trace)))
        _conclude(done, yes=yes)


def approve(
    run_id: str = typer.Argument(..., help="The run whose proposal to apply."),
    repo: Path | None = typer.Option(None, "--repo", help="The repository (default: the run's)."),
    sha256: str | None = typer.Option(None, "--sha256", help="The sha256 you were shown; refused if it differs. "
                                      "Without it the diff is shown and you are asked (a terminal is needed)."),
    onto_current: bool = typer.Option(False, "--onto-current",
                                      help="Apply even though HEAD moved or changed branch since the proposal "
                                           "(the new branch then starts from the current HEAD)."),
    push: bool = typer.Option(False, "--push", help="Then push the approved commit to branch repopilot/RUN_ID "
                              "on --remote, with your own git credentials (never forced; off by default)."),
    pr: bool = typer.Option(False, "--pr", help="Then push it (implies --push) and open a DRAFT pull request into "
                            "the branch the fix was proposed on, its body the diagnosis, the explanation and the "
                            "verification receipt. Needs GITHUB_TOKEN, sent only to api.github.com or "
                            "GITHUB_API_URL."),
    remote: str = typer.Option("origin", "--remote", help="The remote --push and --pr use."),
) -> None:
    """Apply a run's proposed diff as one commit on a new branch repopilot/RUN_ID (and, asked, hand it off)."""
    # Where it would go is checked first: a missing remote or token refuses before anything is applied.
    settings = settings_from()
    target = remote_target(settings, run_id, repo=repo, remote=remote, pull_request=pr) if push or pr else None
    if sha256 is None:
        sha256 = _sha256_from_person(run_id)
    _say_approved(approve_run(run_id, repo=repo, sha256=sha256, onto_current=onto_current), run_id)
    if target is not None:
        _say_handed_off(hand_off(settings, run_id, target, pull_request=pr), remote)


def _say_handed_off(done: HandOff, remote: str) -> None:
    out.print(f"Pushed commit {done.commit[:12]} to branch {done.branch} on {remote} ({done.pushed_to}).",
              markup=False)
    if done.pull_request_url:
        again = " (it was already open)" if done.existed else ""
        out.print(f"Draft pull request #{done.pull_request}{again}: {done.pull_request_url}", markup=False)


def _sha256_from_person(run_id: str) -> str | None:
    """Without --sha256 the person must see the diff being approved: the trace file could have been rewritten
    consistently (diff and sha256 together) since `fix` showed it. On a terminal: show it and ask (default No);
    otherwise refuse. None when the run is already decided (approve_run says so; nothing is applied)."""
    proposal = load_proposal(load_trace(run_id))
    if proposal.decision is not None:
        return None
    if not _stdin_is_terminal():
        raise UsageError(f"approving run {run_id} without a terminal needs --sha256 SHA (the sha256 printed with "
                         "the diff you reviewed), so that exactly that diff is applied; nothing was applied")
    _show_proposal(proposal)
    try:
        ok = typer.confirm(f"Apply this diff as one commit on a new branch repopilot/{run_id}?", default=False)
    except typer.Abort:  # Ctrl-C or end of input: no answer is not a yes
        ok = False
    if not ok:
        err.print(f"Not approved; nothing was applied. Run {run_id} still awaits approval.", markup=False)
        raise typer.Exit(3)
    return proposal.sha256


def reject(
    run_id: str = typer.Argument(..., help="The run whose proposal to reject."),
    reason: str | None = typer.Option(None, "--reason", help="Why; the model reads it if the run is resumed."),
) -> None:
    """Reject a run's proposed diff; nothing is applied."""
    _say_rejected(reject_run(run_id, reason=reason), run_id)


def resume(
    run_id: str = typer.Argument(..., help="The run to continue."),
    repo: Path | None = typer.Option(None, "--repo", help="The repository (default: the run's)."),
    yes: bool = typer.Option(False, "--yes", help="Approve a new proposal without asking."),
    allow_weakening: bool = typer.Option(False, "--allow-weakening", help="Let through a proposal that weakens "
                                         "the checks (it is still shown)."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="The whole run summary, even without model calls."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No run summary at the end."),
) -> None:
    """Continue a run from its trace: answered model turns and recorded tool results are not repeated."""
    settings = settings_from(allow_weakening=True if allow_weakening else None)
    with summaries(verbose=verbose, quiet=quiet):
        done = resume_run(run_id, settings, repo=repo, observer=reporting, on_diagnosis=_show_diagnosis)
        if done.trace.command == "fix":
            _conclude(done, yes=yes)
        else:
            out.print(redact_text(done.trace.answer or f"(no answer; status {done.trace.status})"), markup=False)


def register(app: typer.Typer) -> None:
    app.command("fix")(fix)
    app.command("approve")(approve)
    app.command("reject")(reject)
    app.command("resume")(resume)
