"""The receipt as text, the same wherever it is shown: above the y/N prompt, in `runs show`, on the HTML trace
page and in the job summary. Plain lines; each client sanitises them as it prints (they quote log lines)."""

from __future__ import annotations

import re

from ..core import CommandRun, Receipt, RunTrace, SetupRun

__all__ = ["OUTCOME_TEXT", "receipt_lines", "receipt_markdown", "receipts_of"]

OUTCOME_TEXT = {"verified": "VERIFIED", "still_failing": "STILL FAILING", "not_reproduced": "NOT REPRODUCED",
                "could_not_run": "COULD NOT RUN", "blocked": "BLOCKED (weakens the checks)"}


def receipts_of(trace: RunTrace) -> list[tuple[int, str | None, Receipt]]:
    """(step number, tool call id, receipt) of each `verification` step, in order."""
    out = []
    for step in trace.steps:
        if step.type == "verification":
            try:
                out.append((step.step_number, step.tool_call_id, Receipt.model_validate(step.detail)))
            except ValueError:
                continue
    return out


def _run_line(label: str, run: CommandRun | None) -> list[str]:
    if run is None:
        return []
    how = "timed out" if run.timed_out else f"exit {run.exit_code}"
    lines = [f"  {label}: {how} in {run.duration_s:.2f}s; output {run.output_bytes} bytes, sha256 "
             f"{run.output_sha256[:16]}; log {run.log}"]
    if run.setup is not None:
        lines.append(f"    {_setup_line(run.setup)}")
    lines += [f"    | {c}" for c in run.causal[:6]]
    return lines


def _setup_line(s: SetupRun) -> str:
    if s.cache == "hit":
        return f"set-up: cache hit (key {s.key[:12]}), put back in {s.duration_s:.2f}s, not run"
    how = "timed out" if s.timed_out else f"exit {s.exit_code}"
    if s.cache == "off":
        return f"set-up: ran ({how}) in {s.duration_s:.2f}s; caching off"
    return f"set-up: cache miss (key {s.key[:12]}), ran ({how}) in {s.duration_s:.2f}s; {s.kept or 'not kept'}"


def receipt_lines(receipt: Receipt) -> list[str]:
    """The receipt, a few lines: outcome and why, the command and where it came from, both runs (exit code,
    time, output digest, causal lines), the guard, the environment, and what it is bound to."""
    lines = [f"Verification: {OUTCOME_TEXT.get(receipt.outcome, receipt.outcome)}: {receipt.reason}"]
    if receipt.command is not None:
        c = receipt.command
        lines.append(f"  command: {c.command}")
        lines.append(f"  from: {c.source}" + (f" (the log ran: {c.narrowed_from})" if c.narrowed_from else "")
                     + f"; in: {c.cwd}")
    if receipt.setup:
        lines.append(f"  set-up: {receipt.setup}")
    lines += _run_line(f"on HEAD {receipt.base[:12]}", receipt.before)
    lines += _run_line("with the diff", receipt.after)
    guard = receipt.guard
    if guard.hits:
        state = "allowed by --allow-weakening" if guard.allowed else "blocked"
        lines.append(f"  guard: {len(guard.hits)} weakening hit(s), {state}:")
        lines += [f"    - {h.rule} in {h.file}: {h.why}: {h.line.strip()[:160]}" for h in guard.hits[:10]]
    else:
        lines.append("  guard: no weakening found")
    if receipt.tools:
        tools = ", ".join(f"{k} {v}" for k, v in sorted(receipt.tools.items()))
        lines.append(f"  environment: sha256 {receipt.env_sha256[:16]}; {tools}")
    lines.append(f"  network: {'allowed' if receipt.network else 'off where the machine allows'}; took "
                 f"{receipt.duration_s:.2f}s; bound to diff sha256 {receipt.diff_sha256[:16]} on "
                 f"{receipt.base[:12] or '-'}")
    return lines


def receipt_markdown(trace: RunTrace) -> str:
    """The run's proposal and receipts for a job summary (Markdown): the lines in a fence no line can close."""
    parts = [f"## RepoPilot fix run `{trace.run_id}`: {trace.status}"]
    proposal = trace.proposal or {}
    if proposal:
        parts.append(f"Proposed diff sha256 `{proposal.get('sha256')}` ({', '.join(proposal.get('files') or [])})")
    for number, call, receipt in receipts_of(trace):
        lines = receipt_lines(receipt)
        longest = max((len(run) for line in lines for run in re.findall(r"`+", line)), default=0)
        fence = "`" * max(3, longest + 1)
        parts.append(f"Step {number} ({call}):\n\n{fence}text\n" + "\n".join(lines) + f"\n{fence}")
    if len(parts) == 1 + bool(proposal):
        parts.append("_No proposal was verified._")
    return "\n\n".join(parts) + "\n"
