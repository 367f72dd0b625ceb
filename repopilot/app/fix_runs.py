"""The fix-run lifecycle: start (diagnose, then the fix agent until it proposes), approve, reject, resume. Each
returns an outcome and prints nothing, so a terminal, a webhook or a Python caller can drive the same runs.

Approval fails closed and is the caller's decision: `start_fix` and `resume_run` stop at `awaiting_approval`;
`approve_run` applies exactly the recorded diff (checked by sha256) as one commit on `repopilot/<run_id>` and
never touches the working tree, the index or the current branch; `reject_run` records a no.
"""

from __future__ import annotations

import getpass
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from ..ci import DiagnosisReport, LogInput, diagnose_source, find_command, log_lines, read_report
from ..core import (
    Agent,
    ApprovalError,
    Budgets,
    FailingCommand,
    Model,
    Proposal,
    RepoPilotError,
    RunTrace,
    ToolRegistry,
    TraceRecorder,
    UsageError,
    run_lock,
)
from ..repo import (
    AppliedFix,
    SetupCache,
    apply_fix,
    commit_object,
    fix_tools,
    mark_applied,
    open_repo,
    repo_tools,
    run_git,
)
from .fix_seed import seed_messages
from .runtime import Observer, github_access, model_for, observed, scanner_for, tool_bounds
from .settings import Settings
from .verifying import VerifyPlan, choose_command, verifier

__all__ = ["ApprovalOutcome", "FixOutcome", "RejectOutcome", "approve_run", "load_proposal", "reject_run",
           "resume_run", "start_fix", "who_am_i"]

_FIX_ARGS = "fix_args"
_VERIFY_COMMAND = "verify_command"  # the command proposals are verified with, recorded for `resume`
_RESUMABLE = ("running", "interrupted", "failed", "approved", "rejected")
OnDiagnosis = Callable[[list[DiagnosisReport]], None]


@dataclass
class FixOutcome:
    """Where a fix (or resumed ask) run stopped: `trace.status` is `awaiting_approval` when a proposal waits."""

    trace: RunTrace
    root: Path
    reports: list[DiagnosisReport] = field(default_factory=list)

    @property
    def proposal(self) -> Proposal | None:
        return load_proposal(self.trace) if self.trace.status == "awaiting_approval" else None


@dataclass(frozen=True)
class ApprovalOutcome:
    proposal: Proposal
    applied: AppliedFix | None  # None when the run was already approved (nothing was done)

    @property
    def already(self) -> bool:
        return self.applied is None


@dataclass(frozen=True)
class RejectOutcome:
    proposal: Proposal
    already: bool


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def who_am_i() -> str:
    try:
        return getpass.getuser()
    except Exception:  # getpass raises when no user name can be found at all
        return "unknown"


def _model(settings: Settings) -> Model:
    model = model_for(settings)
    assert model is not None  # required: model_for raised ConfigError otherwise
    return model


# -- approval -----------------------------------------------------------------------------------------------

def load_proposal(trace: RunTrace) -> Proposal:
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
    _check_receipt(trace, proposal)
    return proposal


def _check_receipt(trace: RunTrace, proposal: Proposal) -> None:
    """A receipt is bound to its diff and base commit, and to the `verification` step that recorded it."""
    receipt = proposal.receipt
    if receipt is None:
        return
    if receipt.diff_sha256 != proposal.sha256 or (proposal.base and receipt.base != proposal.base):
        raise ApprovalError(f"the verification receipt in run {trace.run_id} was made for another diff or base "
                            f"commit (receipt: diff {receipt.diff_sha256[:12]} on {receipt.base[:12]}; proposal: "
                            f"diff {proposal.sha256[:12]} on {(proposal.base or '')[:12]}); refusing it")
    steps = [s for s in trace.steps if s.type == "verification" and s.tool_call_id == proposal.tool_call_id]
    last = steps[-1] if steps else None
    if last is None or last.result != receipt.outcome or last.detail.get("diff_sha256") != receipt.diff_sha256 \
            or last.detail.get("base") != receipt.base:
        raise ApprovalError(f"the verification receipt in run {trace.run_id} does not match the step that "
                            "recorded it (altered trace); refusing it")


def _check_receipt_base(root: Path, proposal: Proposal) -> None:
    """With --onto-current the diff would land on a commit the receipt's runs never saw: refused."""
    receipt = proposal.receipt
    if receipt is None or not receipt.base or receipt.outcome in ("could_not_run", "blocked"):
        return
    head = run_git(root, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], check=False).strip()
    if head != receipt.base:
        raise ApprovalError(f"the verification receipt was made on {receipt.base[:12]}, HEAD is now "
                            f"{head[:12] or 'no commit'}; nothing was applied. Run `repopilot fix` again to verify "
                            "the change on the current HEAD")


def approve_run(run_id: str, *, repo: Path | None = None, sha256: str | None = None, who: str | None = None,
                onto_current: bool = False) -> ApprovalOutcome:
    """Apply the recorded proposal of `run_id` on branch `repopilot/<run_id>` and record the approval. `sha256`
    is what the person reviewed: a different recorded diff is refused."""
    with run_lock(run_id):
        return _approve(run_id, repo=repo, sha256=sha256, who=who, onto_current=onto_current)


def _approve(run_id: str, *, repo: Path | None, sha256: str | None, who: str | None,
             onto_current: bool) -> ApprovalOutcome:
    rec = TraceRecorder.resume(run_id)
    t = rec.trace
    proposal = load_proposal(t)
    if sha256 is not None and sha256.strip().lower() != proposal.sha256:
        raise ApprovalError(f"sha256 mismatch: you approved {sha256.strip()} but run {run_id} holds "
                            f"{proposal.sha256}; nothing was applied")
    if proposal.decision == "approved":
        if t.status != "approved":  # killed between recording the approval and marking the run
            rec.finish("approved")
        return ApprovalOutcome(proposal, None)
    if proposal.decision == "rejected":
        raise ApprovalError(f"run {run_id} was rejected; nothing to approve (`repopilot resume {run_id}` asks the "
                            "model for another proposal)")
    if t.status not in ("awaiting_approval", "running", "interrupted"):
        raise ApprovalError(f"run {run_id} is not awaiting approval (status {t.status})")
    root = open_repo(repo or t.repo or ".")
    if onto_current:
        _check_receipt_base(root, proposal)
    who = who or who_am_i()
    applied = apply_fix(root, proposal.diff, run_id=run_id, sha256=proposal.sha256,
                        explanation=proposal.explanation, who=who, base=proposal.base,
                        base_branch=proposal.base_branch, onto_current=onto_current)
    proposal = proposal.model_copy(update={"decision": "approved", "decided_by": who, "decided_at": _now(),
                                           "branch": applied.branch, "commit": applied.commit,
                                           "commit_object": commit_object(root, applied.commit)})
    t.proposal = proposal.model_dump(mode="json")
    mark_applied(t.extra, applied.branch)
    rec.step("approval", result="approved", detail={
        "decision": "approved", "who": who, "when": proposal.decided_at, "sha256": proposal.sha256,
        "tool_call_id": proposal.tool_call_id, "branch": applied.branch, "commit": applied.commit,
        "base": applied.base, "files": applied.files, "branch_existed": applied.already,
        "verification": proposal.receipt.outcome if proposal.receipt else None})
    rec.finish("approved")
    return ApprovalOutcome(proposal, applied)


def reject_run(run_id: str, *, reason: str | None = None, who: str | None = None) -> RejectOutcome:
    """Record that the proposal of `run_id` was rejected; nothing is applied."""
    with run_lock(run_id):
        return _reject(run_id, reason=reason, who=who)


def _reject(run_id: str, *, reason: str | None, who: str | None) -> RejectOutcome:
    rec = TraceRecorder.resume(run_id)
    t = rec.trace
    if t.proposal is None:
        raise ApprovalError(f"run {run_id} has no proposal to reject (status {t.status})")
    try:
        proposal = Proposal.model_validate(t.proposal)
    except ValueError:
        raise ApprovalError(f"the proposal recorded in run {run_id} is unparseable") from None
    if proposal.decision == "rejected":
        return RejectOutcome(proposal, already=True)
    if proposal.decision == "approved":
        raise ApprovalError(f"run {run_id} was already approved and applied on branch {proposal.branch}; "
                            "delete that branch to undo it")
    who = who or who_am_i()
    proposal = proposal.model_copy(update={"decision": "rejected", "decided_by": who, "decided_at": _now(),
                                           "reason": reason})
    t.proposal = proposal.model_dump(mode="json")
    rec.step("approval", result="rejected", detail={
        "decision": "rejected", "who": who, "when": proposal.decided_at, "sha256": proposal.sha256,
        "tool_call_id": proposal.tool_call_id, "reason": reason})
    rec.finish("rejected")
    return RejectOutcome(proposal, already=False)


# -- start and resume ---------------------------------------------------------------------------------------

def start_fix(source: str, settings: Settings, *, repo: Path = Path("."), baseline: str | None = None,
              no_llm_diagnosis: bool = False, observer: Observer | None = None,
              on_diagnosis: OnDiagnosis | None = None) -> FixOutcome:
    """Diagnose SOURCE, then run the fix agent on the repository until it proposes a diff (the run then awaits
    approval), answers without one, or stops. `on_diagnosis` sees the reports before the agent starts."""
    model = _model(settings)
    root = open_repo(repo)
    rec = TraceRecorder.start("fix", f"fix the CI failure in {source}", repo=str(root))
    # What `resume` needs to redo the diagnosis if the process dies before the agent's first step is saved.
    rec.trace.extra[_FIX_ARGS] = {"source": source, "baseline": baseline, "no_llm_diagnosis": no_llm_diagnosis,
                                  "max_steps": settings.max_steps}
    rec.save()
    with run_lock(rec.trace.run_id):
        return _fix(rec, root, source, settings, baseline=baseline, model=model, no_llm_diagnosis=no_llm_diagnosis,
                    max_steps=settings.max_steps, observer=observer, on_diagnosis=on_diagnosis)


def _fix(rec: TraceRecorder, root: Path, source: str, settings: Settings, *, baseline: str | None, model: Model,
         no_llm_diagnosis: bool, max_steps: int, observer: Observer | None,
         on_diagnosis: OnDiagnosis | None = None) -> FixOutcome:
    found: list[FailingCommand] = []

    def command_of(log: LogInput, report: DiagnosisReport) -> None:
        if settings.verify and not settings.verify_cmd and not found:
            command = find_command(log_lines(log), report)
            found.extend([command] if command else [])

    try:
        reports = diagnose_source(source, baseline=baseline, model=None if no_llm_diagnosis else model,
                                  token_budget=settings.token_budget, scanner=scanner_for(settings),
                                  github=github_access(settings), recorder=rec, on_log=command_of)
    except (RepoPilotError, KeyboardInterrupt):
        rec.finish("failed")  # no conversation yet: nothing to resume, `fix` is simply run again
        raise
    rec.trace.set_reports([r.contract() for r in reports])
    _record_command(rec, settings, choose_command(settings, found[0] if found else None))
    rec.save()
    if on_diagnosis is not None:
        on_diagnosis(reports)
    tools = fix_tools(root, verify=verifier(root, _plan(rec, settings, reports), rec), **tool_bounds(settings))
    agent = Agent(model, ToolRegistry(tools), rec, Budgets(max_steps=max_steps),
                  max_tool_calls_per_turn=settings.max_tool_calls_per_turn)
    with observed(rec, model, settings, observer):
        agent.run(seed_messages(reports))
    return FixOutcome(rec.trace, root, reports)


def resume_run(run_id: str, settings: Settings, *, repo: Path | None = None, observer: Observer | None = None,
               on_diagnosis: OnDiagnosis | None = None) -> FixOutcome:
    """Continue a fix or ask run from its trace: answered model turns and recorded tool results are not repeated.
    A run awaiting approval with no decision stays as it is (the caller decides)."""
    with run_lock(run_id):
        rec = TraceRecorder.resume(run_id)
        t = rec.trace
        if t.command not in ("fix", "ask"):
            raise UsageError(f"run {run_id} is a {t.command} run; only ask and fix runs can be resumed")
        if t.status != "awaiting_approval" and not t.status.startswith(_RESUMABLE):
            raise UsageError(f"run {run_id} already finished (status {t.status}); nothing to resume")
        root = open_repo(repo or t.repo or ".")
        if not t.messages:
            return _rediagnose(rec, root, settings, observer, on_diagnosis)
        decided = bool(t.proposal and t.proposal.get("decision"))
        if t.status != "awaiting_approval" or decided:
            model = _model(settings)
            bounds = tool_bounds(settings)
            if t.command == "fix":
                reports = [r for r in (read_report(d) for d in t.reports()) if r is not None]
                tools = fix_tools(root, verify=verifier(root, _plan(rec, settings, reports), rec), **bounds)
            else:
                tools = repo_tools(root, **bounds)
            agent = Agent(model, ToolRegistry(tools), rec, max_tool_calls_per_turn=settings.max_tool_calls_per_turn)
            with observed(rec, model, settings, observer):
                agent.resume()
        return FixOutcome(t, root, [r for r in (read_report(d) for d in t.reports()) if r is not None])


def _record_command(rec: TraceRecorder, settings: Settings, command: FailingCommand | None) -> None:
    """Where the verification command came from, as a decision step: it is never guessed silently."""
    rec.trace.extra[_VERIFY_COMMAND] = command.model_dump(mode="json") if command else None
    if not settings.verify:
        return
    rec.step("decision", result=command.command if command else "no command", detail={
        "decision": "verify_command", "command": command.command if command else None,
        "source": command.source if command else "none found in the log; pass --verify-cmd or set [verify] cmd",
        "narrowed_from": command.narrowed_from if command else None})


def _plan(rec: TraceRecorder, settings: Settings, reports: list[DiagnosisReport]) -> VerifyPlan:
    recorded = rec.trace.extra.get(_VERIFY_COMMAND)
    command = FailingCommand.model_validate(recorded) if isinstance(recorded, dict) else None
    command = choose_command(settings, command)
    return VerifyPlan(command=command, reports=reports, logs=rec.path.with_suffix(".verify"),
                      enabled=settings.verify, setup=settings.verify_setup, setup_cache=_setup_cache(settings),
                      timeout=settings.verify_timeout,
                      network=settings.verify_network, allow_weakening=settings.allow_weakening,
                      env=settings.verify_env)


def _setup_cache(settings: Settings) -> SetupCache | None:
    if not settings.verify_setup_cache:
        return None
    return SetupCache(settings.setup_cache_dir(), settings.verify_setup_cache_mb * 1_000_000)


def _rediagnose(rec: TraceRecorder, root: Path, settings: Settings, observer: Observer | None,
                on_diagnosis: OnDiagnosis | None) -> FixOutcome:
    """A fix run that died during its diagnosis starts again from the diagnosis (it is deterministic when no
    model is asked); there is no conversation yet to resume."""
    t = rec.trace
    args = t.extra.get(_FIX_ARGS)
    if t.command != "fix" or not isinstance(args, dict) or args.get("source") in (None, "-"):
        raise UsageError(f"run {t.run_id} stopped before its agent started (status {t.status}); run the command "
                         "again")
    rec.step("decision", result="rediagnose", detail={"decision": "resume_from_diagnosis", "status": t.status})
    t.status, t.finished_at = "running", None
    return _fix(rec, root, str(args["source"]), settings, baseline=args.get("baseline"), model=_model(settings),
                no_llm_diagnosis=bool(args.get("no_llm_diagnosis")),
                max_steps=int(args.get("max_steps") or settings.max_steps), observer=observer,
                on_diagnosis=on_diagnosis)
