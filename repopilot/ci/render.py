"""Diagnosis output: text (rich), Markdown (PR comment / job summary) and GitHub workflow-command annotations.
JSON is the contract dict itself (`engine.to_contract`)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape

__all__ = ["MAX_ANNOTATIONS", "render_github", "render_markdown", "render_text"]

# The runner shows at most 10 error annotations per step (and 50 per job): a diagnose step stays within one.
MAX_ANNOTATIONS = 10
_SHOW_LINES = 12


def _where(f: dict[str, Any]) -> str:
    if f.get("file"):
        return f"{f['file']}:{f['line']}" if f.get("line") else str(f["file"])
    return ""


def _causal(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["failures"] if f.get("causal")] or report["failures"][:1]


def _name(report: dict[str, Any]) -> str:
    # `log` is the engine's display name; a report holding only the documented contract has `source`.
    return str(report.get("log") or report.get("source") or "log")


def render_text(report: dict[str, Any], console: Console, *, verbose: bool = False) -> None:
    head = f"[bold]{escape(_name(report))}[/bold]: "
    cat = report["category"]
    colour = "green" if cat == "unknown" else "red"
    head += f"[{colour} bold]{cat}[/{colour} bold] (decided by {report['decided_by']}"
    failures = _causal(report)
    if failures and report["decided_by"] == "rules":
        head += f", rule {escape(failures[0]['rule'])}"
    # One confidence: the diagnosis's own (how sure the category is), the one that decided it.
    if report.get("confidence") is not None:
        head += f", confidence {report['confidence']:.2f}"
    head += ")"
    console.print(head)
    if report.get("failing_step") and report["failing_step"].get("name"):
        step = report["failing_step"]
        console.print(f"  failing step: {escape(step['name'][:100])} (line {step['line']}, exit {step['exit_code']})")
    if report.get("summary"):
        console.print(f"  model: {escape(report['summary'])}")
    if not report["failures"] and not report["error_lines"]:
        console.print("  no known error pattern matched; the excerpt below is the best guess")
    shown_failures = failures if verbose else failures[:5]
    hinted: set[str] = set()
    for f in shown_failures:
        where = _where(f)
        title = f"  [bold]{escape(f['rule'])}[/bold] ({f['category']})"
        if where:
            title += f" [cyan]{escape(where)}[/cyan]"
        if f.get("test"):
            title += f" test {escape(str(f['test']))}"
        console.print(title)
        console.print(f"    {escape(f['message'][:200])}")
        lines = f["lines"] if verbose else f["lines"][:_SHOW_LINES]
        for item in lines:
            console.print(f"    [dim]{item['line']:>7} │[/dim] {escape(item['text'][:200])}")
        if len(f["lines"]) > len(lines):
            console.print(f"    [dim]        … {len(f['lines']) - len(lines)} more lines[/dim]")
        if f.get("repeats", 1) > 1:
            console.print(f"    [dim](seen {f['repeats']} times)[/dim]")
        if f.get("hint") and f["rule"] not in hinted:
            hinted.add(f["rule"])
            console.print(f"    [yellow]hint:[/yellow] {escape(f['hint'])}")
    if len(failures) > len(shown_failures):
        console.print(f"  … {len(failures) - len(shown_failures)} more failures (--format json for all)")
    if not failures:
        console.print("[dim]excerpt:[/dim]")
        for line in report["excerpt"]["text"].splitlines()[1:40]:
            console.print(f"  {escape(line)}")
    if report.get("hint") and report["decided_by"] == "llm":
        console.print(f"  [yellow]hint:[/yellow] {escape(report['hint'])}")
    lines = report["error_lines"]
    if lines:
        console.print(f"  [dim]{len(lines)} causal lines; excerpt {report['excerpt']['tokens']} tokens[/dim]")


def render_markdown(reports: list[dict[str, Any]]) -> str:
    out: list[str] = []
    for report in reports:
        failures = _causal(report)
        out.append(f"### RepoPilot: `{_md(_name(report))}` failed: **{report['category']}**")
        out.append("")
        out.append(f"Decided by {report['decided_by']}; {len(report['error_lines'])} causal lines.")
        if report.get("summary"):
            out.append(f"\n> {_md(report['summary'])}")
        if failures:
            out.append("")
            out.append("| rule | category | where | message |")
            out.append("|---|---|---|---|")
            for f in failures[:10]:
                out.append(f"| `{f['rule']}` | {f['category']} | {_md(_where(f)) or '-'} | {_md(f['message'][:120])} |")
        for f in failures[:3]:
            out.append("")
            out.append(f"<details><summary><code>{_html(f['rule'])}</code>: {_html(f['message'][:100])}</summary>")
            out.append("")
            out.append("```text")
            for item in f["lines"][:30]:
                out.append(f"{item['line']:>6} | {item['text'][:200].replace('```', '` ` `')}")
            out.append("```")
            out.append("</details>")
            if f.get("hint"):
                out.append(f"\n**Hint:** {_md(f['hint'])}")
        if not failures:
            out.append("\nNo known error pattern matched. Excerpt:\n\n```text")
            out.extend(report["excerpt"]["text"].replace("```", "` ` `").splitlines()[:40])
            out.append("```")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(reports: list[dict[str, Any]]) -> str:
    """`::error file=…,line=…,title=…::message` lines, at most MAX_ANNOTATIONS in all."""
    out: list[str] = []
    for report in reports:
        failures = _causal(report)
        if not failures:
            out.append(f"::error title={_escape_property('RepoPilot: ' + report['category'])}::"
                       f"{_escape_data('No known error pattern matched in ' + _name(report))}")
        for f in failures:
            props = []
            if f.get("file"):
                props.append(f"file={_escape_property(str(f['file']))}")
                if f.get("line"):
                    props.append(f"line={int(f['line'])}")
                if f.get("column"):
                    props.append(f"col={int(f['column'])}")
            title = "RepoPilot: {} ({})".format(f["category"], f["rule"])
            props.append(f"title={_escape_property(title)}")
            body = f["message"]
            if f.get("hint"):
                body += f"\nHint: {f['hint']}"
            body += f"\n(log {_name(report)}, line {f['lines'][0]['line'] if f['lines'] else '?'})"
            out.append(f"::error {','.join(props)}::{_escape_data(body)}")
    return "\n".join(out[:MAX_ANNOTATIONS]) + ("\n" if out else "")
