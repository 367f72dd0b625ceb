"""`repopilot fix SOURCE`, `approve RUN_ID`, `reject RUN_ID` and `resume RUN_ID`.

`fix` diagnoses SOURCE, lets the fix agent read the repository and propose a diff, and shows it with its sha256.
Approval fails closed: a terminal gets a y/N question (default No); without a terminal and without `--yes`
nothing is applied and the command exits 3 with the exact `approve` command. `approve` applies exactly the
recorded diff, checked by sha256, as one commit on branch `repopilot/<run_id>`; the working tree, the index and
the current branch are never touched and nothing is pushed.
"""

from __future__ import annotations

import getpass
import os
import shlex
import sys
from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path

import typer

from ..app import Settings, github_access, model_for, observed, scanner_for, seed_messages, tool_bounds
from ..ci import DiagnosisReport, diagnose_source
from ..core import (
    DEFAULT_MAX_STEPS,
    Agent,
    ApprovalError,
    Budgets,
    Model,
    Proposal,
    RepoPilotError,
    RunError,
    RunTrace,
    ToolRegistry,
    TraceRecorder,
    UsageError,
    load_trace,
    redact_text,
    run_lock,
)
from ..core.trace import now_iso
from ..repo import fix_tools, open_repo, repo_tools
from ..repo.apply import apply_fix
from ..repo.propose import APPLIED_BRANCH
from .console import diff_view, err, out
from .context import settings_from
from .render import render_text
from .session import reporting

__all__ = ["approve_run", "register", "reject_run"]

_FIX_ARGS = "fix_args"
_RESUMABLE = ("running", "interrupted", "failed", "approved", "rejected")


def _run_lock(run_id: str) -> AbstractContextManager[None]:
    return run_lock(run_id)


def _model(settings: Settings) -> Model:
    model = model_for(settings)
    assert model is not None  # required: model_for raised ConfigError otherwise
    return model


def _who() -> str:
    try:
        return os.environ.get("USER") or getpass.getuser()
    except Exception:  # getpass raises when no user name can be found at all
        return "unknown"


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
    out.print(f"files: {', '.join(proposal.files)}", markup=False)
    out.print(f"sha256: {proposal.sha256}", markup=False)


def _approve_command(run_id: str, root: Path | str | None, sha256: str) -> str:
    repo = f" --repo {shlex.quote(str(root))}" if root else ""
    return f"repopilot approve {run_id}{repo} --sha256 {sha256}"


# -- approval -----------------------------------------------------------------------------------------------

def _load_proposal(trace: RunTrace) -> Proposal:
    """The recorded proposal, refused when missing, unparseable or inconsistent with the rest of the trace."""
    if trace.proposal is None:
        raise ApprovalError(f"run {trace.run_id} has no proposal to decide on (status {trace.status})")
    try:
        proposal = Proposal.model_validate(trace.proposal)
    except ValueError:
        raise ApprovalError(f"the proposal recorded in run {trace.run_id} is unparseable; refusing it") from None
    if not proposal.intact():
        raise ApprovalError(f"the proposal in run {trace.run_id} was altered: its diff no longer matches the "
                            "recorded sha256; refusing it")
    # The sha256 was also written with the tool's result and the tool state, in other steps of the same file.
    results = [s for s in trace.steps if s.type == "tool_result" and s.tool_call_id == proposal.tool_call_id]
    keyed = (trace.extra.get("proposals") or {}).get(proposal.tool_call_id or "") or {}
    if not results or proposal.sha256 not in str(results[-1].result) or keyed.get("sha256") != proposal.sha256:
        raise ApprovalError(f"the proposal in run {trace.run_id} does not match the step that recorded it "
                            "(altered trace); refusing it")
    return proposal


def approve_run(run_id: str, *, repo: Path | None = None, sha256: str | None = None,
                who: str | None = None, onto_current: bool = False) -> Proposal:
    """Apply the recorded proposal of `run_id` on branch `repopilot/<run_id>` and record the approval."""
    with _run_lock(run_id):
        return _approve(run_id, repo=repo, sha256=sha256, who=who, onto_current=onto_current)


def _approve(run_id: str, *, repo: Path | None, sha256: str | None, who: str | None,
             onto_current: bool = False) -> Proposal:
    rec = TraceRecorder.resume(run_id)
    t = rec.trace
    proposal = _load_proposal(t)
    if sha256 is not None and sha256.strip().lower() != proposal.sha256:
        raise ApprovalError(f"sha256 mismatch: you approved {sha256.strip()} but run {run_id} holds "
                            f"{proposal.sha256}; nothing was applied")
    if proposal.decision == "approved":
        if t.status != "approved":  # killed between recording the approval and marking the run
            rec.finish("approved")
        out.print(f"Run {run_id} is already approved: branch {proposal.branch} (commit {(proposal.commit or '')[:12]})."
                  " Nothing to do.", markup=False)
        return proposal
    if proposal.decision == "rejected":
        raise ApprovalError(f"run {run_id} was rejected; nothing to approve (`repopilot resume {run_id}` asks the "
                            "model for another proposal)")
    if t.status not in ("awaiting_approval", "running", "interrupted"):
        raise ApprovalError(f"run {run_id} is not awaiting approval (status {t.status})")
    root = open_repo(repo or t.repo or ".")
    who = who or _who()
    applied = apply_fix(root, proposal.diff, run_id=run_id, sha256=proposal.sha256,
                        explanation=proposal.explanation, who=who, base=proposal.base,
                        base_branch=proposal.base_branch, onto_current=onto_current)
    proposal = proposal.model_copy(update={"decision": "approved", "decided_by": who, "decided_at": now_iso(),
                                           "branch": applied.branch, "commit": applied.commit})
    t.proposal = proposal.model_dump(mode="json")
    t.extra[APPLIED_BRANCH] = applied.branch
    rec.step("approval", result="approved", detail={
        "decision": "approved", "who": who, "when": proposal.decided_at, "sha256": proposal.sha256,
        "tool_call_id": proposal.tool_call_id, "branch": applied.branch, "commit": applied.commit,
        "base": applied.base, "files": applied.files, "branch_existed": applied.already})
    rec.finish("approved")
    out.print(f"Approved by {who}: applied as commit {applied.commit[:12]} on branch [bold]{applied.branch}[/bold] "
              f"(from {applied.base[:12]}). Your working tree, index and current branch are untouched; nothing "
              "was pushed.")
    return proposal


def reject_run(run_id: str, *, reason: str | None = None, who: str | None = None) -> Proposal:
    """Record that the proposal of `run_id` was rejected; nothing is applied."""
    with _run_lock(run_id):
        return _reject(run_id, reason=reason, who=who)


def _reject(run_id: str, *, reason: str | None, who: str | None) -> Proposal:
    rec = TraceRecorder.resume(run_id)
    t = rec.trace
    if t.proposal is None:
        raise ApprovalError(f"run {run_id} has no proposal to reject (status {t.status})")
    try:
        proposal = Proposal.model_validate(t.proposal)
    except ValueError:
        raise ApprovalError(f"the proposal recorded in run {run_id} is unparseable") from None
    if proposal.decision == "rejected":
        out.print(f"Run {run_id} is already rejected. Nothing to do.", markup=False)
        return proposal
    if proposal.decision == "approved":
        raise ApprovalError(f"run {run_id} was already approved and applied on branch {proposal.branch}; "
                            "delete that branch to undo it")
    who = who or _who()
    proposal = proposal.model_copy(update={"decision": "rejected", "decided_by": who, "decided_at": now_iso(),
                                           "reason": reason})
    t.proposal = proposal.model_dump(mode="json")
    rec.step("approval", result="rejected", detail={
        "decision": "rejected", "who": who, "when": proposal.decided_at, "sha256": proposal.sha256,
        "tool_call_id": proposal.tool_call_id, "reason": reason})
    rec.finish("rejected")
    out.print(f"Rejected by {who}; nothing was applied.", markup=False)
    return proposal


def _conclude(rec: TraceRecorder, root: Path, *, yes: bool) -> None:
    """After the agent stopped: the approval gate, or the answer, or a clear failure."""
    t = rec.trace
    if t.status == "awaiting_approval":
        proposal = _load_proposal(t)
        _show_proposal(proposal)
        if yes:
            approve_run(t.run_id, repo=root, sha256=proposal.sha256, who=f"{_who()} (--yes)")
            return
        if _stdin_is_terminal():
            try:
                ok = typer.confirm(f"Apply this diff as one commit on a new branch repopilot/{t.run_id}?",
                                   default=False)
            except typer.Abort:  # Ctrl-C or end of input at the prompt: no answer is not a yes
                ok = None
            if ok:
                approve_run(t.run_id, repo=root, sha256=proposal.sha256)
                return
            if ok is False:
                reject_run(t.run_id, reason="declined at the prompt")
                return
        err.print(f"Awaiting approval; nothing was applied. Run id: {t.run_id}", markup=False)
        err.print("To apply it:  " + _approve_command(t.run_id, root, proposal.sha256), markup=False)
        err.print(f"To reject it: repopilot reject {t.run_id} --reason TEXT", markup=False)
        raise typer.Exit(3)
    if t.status.startswith("failed"):
        raise RunError(f"run {t.run_id} ended without a fix ({t.status}): {t.answer or 'see the trace'}")
    out.print(redact_text(t.answer or f"(no answer; status {t.status})"), markup=False)
    if t.status != "approved" and not (t.proposal and Proposal.model_validate(t.proposal).decision):
        out.print(f"No fix was proposed (status {t.status}).", markup=False)


# -- commands -----------------------------------------------------------------------------------------------

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
) -> None:
    """Diagnose a failing CI log, then propose a fix as a diff that you approve before anything is applied."""
    settings = settings_from(max_steps=max_steps)
    max_steps = settings.max_steps
    model = _model(settings)
    root = open_repo(repo)
    rec = TraceRecorder.start("fix", f"fix the CI failure in {source}", repo=str(root))
    # What `resume` needs to redo the diagnosis if the process dies before the agent's first step is saved.
    rec.trace.extra[_FIX_ARGS] = {"source": source, "baseline": baseline, "no_llm_diagnosis": no_llm_diagnosis,
                                  "max_steps": max_steps}
    rec.save()
    with _run_lock(rec.trace.run_id):
        _fix(rec, root, source, baseline=baseline, model=model, no_llm_diagnosis=no_llm_diagnosis,
             max_steps=max_steps, yes=yes)


def _fix(rec: TraceRecorder, root: Path, source: str, *, baseline: str | None, model: Model,
         no_llm_diagnosis: bool, max_steps: int, yes: bool) -> None:
    try:
        settings = settings_from()
        reports = diagnose_source(source, baseline=baseline, model=None if no_llm_diagnosis else model,
                                  token_budget=settings.token_budget, scanner=scanner_for(settings),
                                  github=github_access(settings),
                                  recorder=rec)
    except (RepoPilotError, KeyboardInterrupt):
        rec.finish("failed")  # no conversation yet: nothing to resume, `fix` is simply run again
        raise
    rec.trace.set_reports([r.contract() for r in reports])
    rec.save()
    _show_diagnosis(reports)
    agent = Agent(model, ToolRegistry(fix_tools(root, **tool_bounds(settings))), rec, Budgets(max_steps=max_steps),
                  max_tool_calls_per_turn=settings.max_tool_calls_per_turn)
    with observed(rec, model, settings_from(), reporting):
        agent.run(seed_messages(reports))
    _conclude(rec, root, yes=yes)


def approve(
    run_id: str = typer.Argument(..., help="The run whose proposal to apply."),
    repo: Path | None = typer.Option(None, "--repo", help="The repository (default: the run's)."),
    sha256: str | None = typer.Option(None, "--sha256", help="The sha256 you were shown; refused if it differs. "
                                      "Without it the diff is shown and you are asked (a terminal is needed)."),
    onto_current: bool = typer.Option(False, "--onto-current",
                                      help="Apply even though HEAD moved or changed branch since the proposal "
                                           "(the new branch then starts from the current HEAD)."),
) -> None:
    """Apply a run's proposed diff as one commit on a new branch repopilot/RUN_ID."""
    if sha256 is None:
        sha256 = _sha256_from_person(run_id)
    approve_run(run_id, repo=repo, sha256=sha256, onto_current=onto_current)


def _sha256_from_person(run_id: str) -> str | None:
    """Without --sha256 the person must see the diff being approved: the trace file could have been rewritten
    consistently (diff and sha256 together) since `fix` showed it. On a terminal: show it and ask (default No);
    otherwise refuse. None when the run is already decided (approve_run says so; nothing is applied)."""
    proposal = _load_proposal(load_trace(run_id))
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
    reject_run(run_id, reason=reason)


def resume(
    run_id: str = typer.Argument(..., help="The run to continue."),
    repo: Path | None = typer.Option(None, "--repo", help="The repository (default: the run's)."),
    yes: bool = typer.Option(False, "--yes", help="Approve a new proposal without asking."),
) -> None:
    """Continue a run from its trace: answered model turns and recorded tool results are not repeated."""
    with _run_lock(run_id):
        _resume(run_id, repo=repo, yes=yes)


def _resume(run_id: str, *, repo: Path | None, yes: bool) -> None:
    rec = TraceRecorder.resume(run_id)
    t = rec.trace
    if t.command not in ("fix", "ask"):
        raise UsageError(f"run {run_id} is a {t.command} run; only ask and fix runs can be resumed")
    if t.status != "awaiting_approval" and not t.status.startswith(_RESUMABLE):
        raise UsageError(f"run {run_id} already finished (status {t.status}); nothing to resume")
    root = open_repo(repo or t.repo or ".")
    if not t.messages:
        _rediagnose(rec, root, yes=yes)
        return
    decided = bool(t.proposal and t.proposal.get("decision"))
    if t.status != "awaiting_approval" or decided:
        settings = settings_from()
        model = _model(settings)
        bounds = tool_bounds(settings)
        tools = fix_tools(root, **bounds) if t.command == "fix" else repo_tools(root, **bounds)
        agent = Agent(model, ToolRegistry(tools), rec, max_tool_calls_per_turn=settings.max_tool_calls_per_turn)
        with observed(rec, model, settings_from(), reporting):
            agent.resume()
    if t.command == "fix":
        _conclude(rec, root, yes=yes)
    else:
        out.print(redact_text(t.answer or f"(no answer; status {t.status})"), markup=False)


def _rediagnose(rec: TraceRecorder, root: Path, *, yes: bool) -> None:
    """A fix run that died during its diagnosis starts again from the diagnosis (it is deterministic when no
    model is asked); there is no conversation yet to resume."""
    t = rec.trace
    args = t.extra.get(_FIX_ARGS)
    if t.command != "fix" or not isinstance(args, dict) or args.get("source") in (None, "-"):
        raise UsageError(f"run {t.run_id} stopped before its agent started (status {t.status}); run the command "
                         "again")
    rec.step("decision", result="rediagnose", detail={"decision": "resume_from_diagnosis", "status": t.status})
    t.status, t.finished_at = "running", None
    _fix(rec, root, str(args["source"]), baseline=args.get("baseline"), model=_model(settings_from()),
         no_llm_diagnosis=bool(args.get("no_llm_diagnosis")),
         max_steps=int(args.get("max_steps") or DEFAULT_MAX_STEPS), yes=yes)


def register(app: typer.Typer) -> None:
    app.command("fix")(fix)
    app.command("approve")(approve)
    app.command("reject")(reject)
    app.command("resume")(resume)
