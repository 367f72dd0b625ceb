"""The self-contained HTML page of one run (`repopilot trace export RUN_ID --html FILE`).

Rendered on the server side with every piece of trace text escaped: traces hold model replies and CI log
lines, which can contain markup. The template (trace_page.html, package data) holds the inline CSS and a little
inline JS (expand rows, filter by step type) and a Content-Security-Policy that forbids loading anything."""

from __future__ import annotations

import json
from html import escape
from importlib.resources import files
from typing import Any

from .. import __version__
from ..app import (
    ReportLine,
    budget_usage,
    format_duration,
    read_report,
    run_span_ms,
    step_outcome,
    step_subject,
    timeline,
)
from ..core import RunTrace, Step, redact
from ..core.sanitize import visible
from .summary import format_cost

__all__ = ["render_trace_page"]

_FILTERS = (("all", "All"), ("llm_call", "Model calls"), ("tool", "Tools"), ("decision", "Decisions"),
            ("approval", "Approvals"), ("error", "Errors"))


def _e(value: Any) -> str:
    # Sanitised first: a bidi override or zero-width character would reorder or hide text in the page too.
    return escape(visible("" if value is None else str(value)), quote=True)


def _status_class(status: str) -> str:
    if status in ("completed", "approved"):
        return f"status-{status}"
    if status in ("failed", "rejected"):
        return f"status-{status}"
    return "status-other"


def _json_block(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, indent=1, ensure_ascii=False, default=str)
    return f"<pre>{_e(text)}</pre>"


def _when(iso: str | None) -> str:
    return "-" if not iso else iso.replace("T", " ").replace("Z", " UTC")


def _meta(trace: RunTrace) -> str:
    t = trace.totals
    cells = [
        ("command", trace.command), ("model", trace.model or "none"), ("repo", trace.repo or "-"),
        ("started", _when(trace.started_at)), ("finished", _when(trace.finished_at)),
        ("duration", format_duration(t.duration_ms)), ("steps", t.steps), ("model calls", t.model_calls),
        ("tool calls", t.tool_calls), ("errors", t.errors),
        ("tokens in / out", f"{t.input_tokens} / {t.output_tokens}"),
        ("cost", format_cost(t.cost) if t.model_calls else "$0 (no model calls)"),
    ]
    inner = "".join(f"<div><dt>{_e(k)}</dt><dd>{_e(v)}</dd></div>" for k, v in cells)
    return f'<dl class="meta" id="totals">{inner}</dl>{_budgets(trace)}'


def _budgets(trace: RunTrace) -> str:
    text = budget_usage(trace)
    return f'<p class="kv" id="budgets">budgets (used / limit): {_e(text)}</p>' if text else ""


def _diff(diff: str) -> str:
    out = []
    for line in diff.rstrip("\n").split("\n"):  # not splitlines(): a form feed must not make a line
        if line.startswith(("+++", "---", "diff ", "index ")):
            cls = "meta-line"
        elif line.startswith("@@"):
            cls = "hunk"
        elif line.startswith("+"):
            cls = "add"
        elif line.startswith("-"):
            cls = "del"
        else:
            cls = "ctx"
        out.append(f'<span class="{cls}">{_e(line) or " "}</span>')
    return f'<pre class="diff">{"".join(out)}</pre>'


def _causal_lines(lines: list[ReportLine]) -> str:
    if not lines:
        return ""
    rows = [f'<span class="ln">{_e(item.line)}</span>{_e(item.text)}' for item in lines]
    return f'<pre class="lines">{chr(10).join(rows)}</pre>'


def _diagnosis(recorded: Any) -> str:
    diag = read_report(recorded)
    if diag is None:
        return ('<section id="diagnosis"><h2>Diagnosis</h2><p class="muted">recorded in a form this version '
                "cannot read</p></section>")
    parts = ['<section id="diagnosis"><h2>Diagnosis</h2>',
             f'<p>Category <span class="badge status-other">{_e(diag.category)}</span> '
             f'decided by <b>{_e(diag.decided_by)}</b>, confidence <b>{diag.confidence:.2f}</b>'
             + (f' <span class="muted">· source {_e(diag.source)}</span>' if diag.source else "")
             + "</p>"
             + (f'<p class="kv">model: {_e(diag.model_note)}</p>' if diag.model_note else "")]
    for i, failure in enumerate(diag.failures, 1):
        where = failure.where()
        parts.append(
            f'<div class="card failure"><h3>{i}. <code>{_e(failure.rule)}</code> '
            f'<span class="kv">{_e(failure.category)} · rule confidence '
            f'<span class="conf">{failure.confidence:.2f}</span></span></h3>'
            f'<div>{_e(failure.message)}</div>'
            + (f'<div class="kv">at <code>{_e(where)}</code></div>' if where else "")
            + (f'<div class="kv">test <code>{_e(failure.test)}</code></div>' if failure.test else "")
            + f'<div class="kv">fingerprint <code>{_e(failure.fingerprint)}</code></div>'
            + '<div class="kv">causal lines</div>' + _causal_lines(failure.lines)
            + (f'<div class="hint">hint: {_e(failure.hint)}</div>' if failure.hint else "")
            + "</div>")
    if diag.error_lines:
        parts.append(f'<p class="kv">error lines: {_e(", ".join(str(n) for n in diag.error_lines))}</p>')
    excerpt = diag.excerpt
    if excerpt.text:
        ranges = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in excerpt.ranges)
        parts.append(f'<details><summary>Excerpt for a model ({_e(excerpt.tokens)} tokens, lines '
                     f'{_e(ranges)})</summary>{_json_block(excerpt.text)}</details>')
    parts.append("</section>")
    return "".join(parts)


def _decisions(steps: list[Step]) -> str:
    decisions = [s for s in steps if s.type in ("decision", "approval")]
    if not decisions:
        return ""
    rows = []
    for s in decisions:
        detail = s.detail
        conf = detail.get("confidence")
        rows.append(
            f"<tr><td class=num>{s.step_number}</td><td><span class='type t-{s.type}'>{_e(s.type)}</span></td>"
            f"<td><code>{_e(step_subject(s))}</code></td><td><code>{_e(detail.get('rule') or '')}</code></td>"
            f"<td class=num>{_e(f'{conf:.2f}' if isinstance(conf, int | float) else '')}</td>"
            f"<td>{_e(step_outcome(s, 240))}</td></tr>")
    return ('<section id="decisions"><h2>Decisions and approvals</h2><table><thead><tr><th>#</th><th>type</th>'
            "<th>decision</th><th>rule</th><th>confidence</th><th>what and why</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table></section>")


def _proposal(proposal: dict[str, Any]) -> str:
    files_list = proposal.get("files") or []
    return ('<section id="proposal"><h2>Proposed fix</h2>'
            f"<p>{_e(proposal.get('explanation'))}</p>"
            f'<p class="kv">files: {_e(", ".join(str(f) for f in files_list) or "-")} · sha256 '
            f'<code>{_e(proposal.get("sha256"))}</code></p>'
            + _diff(str(proposal.get("diff") or "")) + "</section>")


def _errors(steps: list[Step]) -> str:
    failed = [s for s in steps if s.error]
    if not failed:
        return ""
    cards = "".join(
        f'<div class="card error"><b>step {s.step_number}</b> <span class="type t-{s.type}">{_e(s.type)}</span> '
        f"<code>{_e(step_subject(s))}</code>{_json_block(s.error)}</div>" for s in failed)
    return f'<section id="errors"><h2>Errors ({len(failed)})</h2>{cards}</section>'


def _step_cost(cost: float | None) -> str:
    # One call often costs a fraction of a cent: four decimals would show $0.0000.
    if cost is None or cost >= 0.01:
        return format_cost(cost)
    return f"${cost:.6f}"


def _kinds(step: Step) -> str:
    kinds: list[str] = [step.type]
    if step.type in ("tool_call", "tool_result"):
        kinds.append("tool")
    if step.error:
        kinds.append("error")
    return " ".join(kinds)


def _timeline(trace: RunTrace) -> str:
    total = max(run_span_ms(trace), 1.0)
    rows = []
    for placed in timeline(trace):
        s = placed.step
        left = min(placed.start_ms / total * 100, 100.0)
        width = min(max(placed.duration_ms / total * 100, 0.3), 100.0 - left)
        tokens = "" if s.input_tokens is None and s.output_tokens is None else \
            f"{s.input_tokens or 0} / {s.output_tokens or 0}"
        cost = "" if s.type != "llm_call" else _step_cost(s.cost)
        detail_id = f"detail-{s.step_number}"
        fields = {k: v for k, v in (("arguments", s.arguments), ("result", s.result), ("error", s.error),
                                     ("detail", s.detail or None)) if v not in (None, "")}
        detail = "".join(f"<h3>{_e(k)}</h3>{_json_block(v)}" for k, v in fields.items()) or \
            '<span class="muted">nothing more recorded</span>'
        rows.append(
            f'<tr class="step{" has-error" if s.error else ""}" data-kinds="{_e(_kinds(s))}" '
            f'data-detail="{detail_id}" id="step-{s.step_number}">'
            f'<td class="num">{s.step_number}</td><td><span class="type t-{s.type}">{_e(s.type)}</span></td>'
            f"<td><code>{_e(step_subject(s))}</code></td>"
            f'<td class="num">+{_e(format_duration(placed.start_ms))}</td>'
            f'<td class="bar-cell"><div class="track"><div class="bar t-{s.type}" '
            f'style="left:{left:.2f}%;width:{width:.2f}%"></div></div></td>'
            f'<td class="num">{_e(format_duration(s.duration_ms))}</td><td class="num">{_e(tokens)}</td>'
            f'<td class="num">{_e(cost)}</td><td class="outcome" title="{_e(step_outcome(s, 400))}">'
            f"{_e(step_outcome(s, 140))}</td></tr>"
            f'<tr class="detail" id="{detail_id}"><td></td><td colspan="8">{detail}</td></tr>')
    buttons = "".join(f'<button type="button" data-filter="{k}"{" class=active" if k == "all" else ""}>'
                      f"{_e(label)}</button>" for k, label in _FILTERS)
    return ('<section id="timeline"><h2>Timeline</h2>'
            f'<div class="controls">{buttons}<button type="button" id="expand-all">Expand all</button></div>'
            '<table><thead><tr><th>#</th><th>type</th><th>tool / model</th><th>start</th>'
            f"<th>duration (run: {_e(format_duration(total))})</th><th>took</th><th>tokens in / out</th>"
            "<th>cost</th><th>result or error (click a row for everything)</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table></section>")


def render_trace_page(trace: RunTrace) -> str:
    """The whole page for `trace`, as one string of HTML. The trace is redacted again before rendering."""
    clean = RunTrace.model_validate(redact(trace.model_dump(mode="json")))
    status = clean.status
    body = [
        f'<header><h1>RepoPilot run <code>{_e(clean.run_id)}</code> '
        f'<span class="badge {_status_class(status)}" id="status">{_e(status)}</span></h1>'
        f'<p class="goal">{_e(clean.goal)}</p></header>',
        _meta(clean),
    ]
    body.extend(_diagnosis(report) for report in clean.reports())
    body.append(_timeline(clean))
    body.append(_decisions(clean.steps))
    if clean.proposal:
        body.append(_proposal(clean.proposal))
    body.append(_errors(clean.steps))
    if clean.answer:
        body.append(f'<section id="answer"><h2>Answer</h2>{_json_block(clean.answer)}</section>')
    template = files("repopilot.cli").joinpath("trace_page.html").read_text(encoding="utf-8")
    return (template.replace("{{title}}", _e(f"RepoPilot run {clean.run_id} ({status})"))
            .replace("{{version}}", _e(__version__))
            .replace("{{body}}", "\n".join(b for b in body if b)))
