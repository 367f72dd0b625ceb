"""Verification of a proposal before anyone is asked: the weakening guard on the diff, then the failing command in
two disposable workspaces, on HEAD (it must fail the way the diagnosis says) and with the diff applied (it must
pass). The result is a receipt (core/receipt.py) recorded as its own trace step and carried by the proposal.

HEAD's run is the same for every proposal of a run: it is kept in the run's tool state (keyed by commit,
command and set-up), so a second proposal runs only its own workspace. The set-up step (installing
dependencies) is cached across runs in the state directory (repo/setup_cache.py): a workspace whose lock files
and tools match a kept set-up gets its files put back instead of running it, and the receipt says which.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..ci import DiagnosisReport, diagnose_input, open_sources
from ..core import (
    CommandRun,
    FailingCommand,
    GuardResult,
    Receipt,
    SandboxError,
    SetupRun,
    ToolContext,
    TraceRecorder,
    UserError,
)
from ..repo import SetupCache, ValidatedDiff, apply_in, check_weakening, run_command, run_setup, tool_versions, worktree
from .settings import Settings

__all__ = ["VerifyPlan", "choose_command", "same_failure", "verifier", "verify_proposal"]

_BEFORE = "verify_before"  # the tool-state key of HEAD's runs
_TOOLS = "verify_tools"
MAX_CAUSAL = 12


@dataclass(frozen=True)
class VerifyPlan:
    command: FailingCommand | None
    reports: Sequence[DiagnosisReport]
    logs: Path  # the run's directory of verification logs
    enabled: bool = True
    setup: str | None = None
    setup_cache: SetupCache | None = None  # None: the set-up runs in every workspace
    timeout: float = 600.0
    network: bool = False
    allow_weakening: bool = False
    env: Mapping[str, str] = field(default_factory=dict)
    why_no_command: str = "no failing command was found in the log; pass --verify-cmd or set [verify] cmd"


def choose_command(settings: Settings, found: FailingCommand | None) -> FailingCommand | None:
    """The command to verify with: the person's (flag, environment or config) over the one read from the log."""
    if settings.verify_cmd:
        return FailingCommand(command=settings.verify_cmd, source=settings.origins.get("verify_cmd", "settings"))
    return found


def verifier(root: Path, plan: VerifyPlan, rec: TraceRecorder) -> Callable[[ValidatedDiff, ToolContext], Receipt]:
    """The check `propose_fix` runs on each valid diff; each receipt is recorded as a `verification` step."""

    def check(checked: ValidatedDiff, ctx: ToolContext) -> Receipt:
        started = time.monotonic()
        receipt = verify_proposal(root, checked, plan, state=ctx.state, name=ctx.tool_call_id,
                                  deadline=ctx.deadline)
        rec.step("verification", tool_call_id=ctx.tool_call_id, result=receipt.outcome,
                 duration_ms=round((time.monotonic() - started) * 1000, 1),
                 detail=receipt.model_dump(mode="json"))
        return receipt

    return check


def verify_proposal(root: Path, checked: ValidatedDiff, plan: VerifyPlan, *, state: dict[str, object],
                    name: str, deadline: float | None = None) -> Receipt:
    started = time.monotonic()
    named = [f.file for r in plan.reports for f in r.failures if f.file]
    guard = check_weakening(checked.diff, named, allowed=plan.allow_weakening)
    receipt = Receipt(outcome="could_not_run", command=plan.command, base=checked.base,
                      diff_sha256=_sha(checked.diff), setup=plan.setup, network=plan.network, guard=guard)
    if guard.blocked:
        return _done(receipt, started, outcome="blocked", reason=_guard_reason(guard))
    if not plan.enabled:
        return _done(receipt, started, reason="verification is turned off (--no-verify or [verify] enabled = "
                                              "false); nothing was run")
    if plan.command is None:
        return _done(receipt, started, reason=plan.why_no_command)
    command = plan.command
    tools = state.setdefault(_TOOLS, {})
    assert isinstance(tools, dict)
    for line in (command.command, plan.setup):
        if line and line not in tools:
            tools[line] = tool_versions(line, plan.env)
    setup_tools = dict(tools.get(plan.setup or "", {}))
    receipt.tools = {**setup_tools, **tools[command.command]}
    receipt.env_sha256 = _sha(json.dumps([receipt.tools, sorted(plan.env)], sort_keys=True))
    try:
        before = _before(root, checked, plan, state, deadline)
        receipt.before = before
        verdict = _reproduced(before, plan)
        if verdict is not None:
            return _done(receipt, started, **verdict)
        after = _run(root, checked, plan, f"{_safe(name)}-after", deadline, diff=checked, setup_tools=setup_tools)
    except (SandboxError, UserError) as exc:
        return _done(receipt, started, reason=f"the workspace could not be made or used: {exc}")
    receipt.after = after
    if after.exit_code == 0:
        return _done(receipt, started, outcome="verified",
                     reason=f"`{command.command}` failed on {checked.base[:12]} as diagnosed and passes with the diff")
    how = "timed out" if after.timed_out else f"exit {after.exit_code}"
    return _done(receipt, started, outcome="still_failing", reason=f"`{command.command}` still fails with the diff "
                                                                    f"({how})")


def _done(receipt: Receipt, started: float, **fields: object) -> Receipt:
    return receipt.model_copy(update={**fields, "duration_s": round(time.monotonic() - started, 3)})


def _guard_reason(guard: GuardResult) -> str:
    rules = sorted({h.rule for h in guard.hits})
    return f"the diff weakens the checks ({', '.join(rules)}); nothing was run (--allow-weakening lets it through)"


def _before(root: Path, checked: ValidatedDiff, plan: VerifyPlan, state: dict[str, object],
            deadline: float | None) -> CommandRun:
    """HEAD's run, once per (commit, command, set-up) in a run."""
    assert plan.command is not None
    key = _sha(json.dumps([checked.base, plan.command.command, plan.setup, plan.network]))[:16]
    runs = state.setdefault(_BEFORE, {})
    assert isinstance(runs, dict)
    if key not in runs:
        tools = state.get(_TOOLS)
        setup_tools = tools.get(plan.setup or "", {}) if isinstance(tools, dict) else {}
        runs[key] = _run(root, checked, plan, f"before-{key[:8]}", deadline, diff=None,
                         setup_tools=setup_tools).model_dump(mode="json")
    return CommandRun.model_validate(runs[key])


def _reproduced(before: CommandRun, plan: VerifyPlan) -> dict[str, object] | None:
    """None when HEAD fails the way the diagnosis says; otherwise the receipt's outcome and reason."""
    if before.timed_out:
        return {"reason": f"the command did not finish on HEAD within {plan.timeout:g}s; nothing can be claimed"}
    if before.exit_code is None:
        return {"reason": "the command could not be started; see its log"}
    if before.exit_code == 0:
        return {"outcome": "not_reproduced", "reason": "the command passes on HEAD here: the failure is flaky or "
                                                       "depends on the CI environment; no fix is claimed"}
    if not same_failure(plan.reports, before):
        shown = "; ".join(before.causal[:2]) or f"exit {before.exit_code}"
        return {"outcome": "not_reproduced", "reason": "the command fails on HEAD here, but not the way the "
                                                       f"diagnosis says ({shown[:300]}); no fix is claimed"}
    return None


def _run(root: Path, checked: ValidatedDiff, plan: VerifyPlan, label: str, deadline: float | None,
         diff: ValidatedDiff | None, setup_tools: Mapping[str, str] | None = None) -> CommandRun:
    assert plan.command is not None
    timeout = plan.timeout if deadline is None else max(1.0, min(plan.timeout, deadline - time.monotonic()))
    with worktree(root, checked.base) as ws:
        if diff is not None:
            apply_in(ws, diff.diff, diff.strip)
        cwd = ws / plan.command.cwd
        setup = _setup(ws, plan, label, timeout, setup_tools or {})
        ran = run_command(cwd, plan.command.command, env=plan.env, timeout=timeout, log=plan.logs / f"{label}.log",
                          network=plan.network)
    report = _rediagnose(ran.log) if ran.exit_code != 0 else None
    causal = [ln.text[:300] for f in report.causal_failures() for ln in f.lines][:MAX_CAUSAL] if report else []
    return CommandRun(exit_code=ran.exit_code, timed_out=ran.timed_out, duration_s=ran.duration_s,
                      output_sha256=ran.output_sha256, output_bytes=ran.output_bytes, log=str(ran.log),
                      category=report.category if report else "unknown", causal=causal, setup=setup)


def _setup(ws: Path, plan: VerifyPlan, label: str, timeout: float, tools: Mapping[str, str]) -> SetupRun | None:
    """The set-up step, put back from the cache when the lock files and tools are the same as a kept one."""
    if not plan.setup or plan.command is None:
        return None
    done = run_setup(ws, plan.command.cwd, plan.setup, cache=plan.setup_cache, tools=tools, env=plan.env,
                     timeout=timeout, log=plan.logs / f"{label}-setup.log", network=plan.network)
    if done.exit_code != 0:
        raise SandboxError(f"the set-up command failed ({'timed out' if done.timed_out else done.exit_code}); see "
                           f"{done.log}")
    return done


def _rediagnose(log: Path) -> DiagnosisReport | None:
    """The diagnosis engine (rules only) on the command's output."""
    if not log.is_file() or log.stat().st_size == 0:
        return None
    try:
        return diagnose_input(open_sources(str(log))[0]).report()
    except UserError:
        return None


# -- the same failure ---------------------------------------------------------------------------------------

def same_failure(reports: Sequence[DiagnosisReport], run: CommandRun) -> bool:
    """Whether the command's failure here is the diagnosed one: a failing test in common when both name tests,
    else a causal line of the same shape, else (the diagnosis named nothing) the same category or any failure."""
    tests = {_leaf(f.test) for r in reports for f in r.causal_failures() if f.test}
    lines = {_shape(ln.text) for r in reports for f in r.causal_failures() for ln in f.lines}
    lines.discard("")
    run_lines = {_shape(x) for x in run.causal} - {""}
    run_tests = {t for t in tests if any(t in x for x in run.causal)}
    if tests and run_tests:
        return True
    if lines & run_lines:
        return True
    if not tests and not lines:
        categories = {r.category for r in reports} - {"unknown"}
        return not categories or run.category in categories or run.category == "unknown"
    return False


def _leaf(test: str) -> str:
    return re.split(r"::|#|/|\.(?=[a-z_]\w*$)", test)[-1]


def _shape(text: str) -> str:
    """A line without what changes between machines and runs: paths' directories, numbers, timings, spaces."""
    text = re.sub(r"(?:[\w.-]*/)+([\w.-]+)", r"\1", text)
    text = re.sub(r"0x[0-9a-f]+|\d+(\.\d+)?", "#", text.lower())
    text = " ".join(text.split())
    return text if len(text) >= 8 else ""


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _safe(name: str) -> str:
    return re.sub(r"[^\w.-]", "_", name)[:80] or "call"
