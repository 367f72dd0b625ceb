"""Diagnosis output as text for machines and pages: JSON (the contract), Markdown (PR comment / job summary) and
GitHub workflow-command annotations. One table, `RENDERERS`, from format name to `render(reports) -> str`; the
coloured terminal text is the CLI's (it needs rich). Every piece of log-derived text passes the one sanitiser
(`core.sanitize`) before its format's own escaping."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from json.encoder import encode_basestring as _encode_string
from typing import Any

from ..core.sanitize import json_visible, visible
from .attribution import LABEL_TEXT
from .fingerprint import short_fingerprint
from .paths import is_repo_relative
from .report import AttributionLabel, DiagnosisReport, ReportFailure

__all__ = ["LINE_CHARS", "MAX_ANNOTATIONS", "RENDERERS", "Renderer", "clip", "cut_line", "indented_json",
           "render_github", "render_json", "render_markdown"]

# A causal line longer than this is shown cut, saying so (`cut_line`); `--full-lines` shows it whole.
LINE_CHARS = 200

# The runner shows at most 10 error annotations per step (and 50 per job): a diagnose step stays within one.
MAX_ANNOTATIONS = 10

Renderer = Callable[[Sequence[DiagnosisReport]], str]


def render_json(reports: Sequence[DiagnosisReport]) -> str:
    """One log's report as an object, several as an array."""
    data = [r.contract() for r in reports]
    return json_visible(indented_json(data[0] if len(data) == 1 else data)) + "\n"


def indented_json(data: Any) -> str:
    """`json.dumps(data, ensure_ascii=False, indent=1)`, the same text. With an indent, json uses its encoder
    written in Python, a generator per nesting level that every piece of text passes up through (a 50 MB log's
    report: about 2 ms); JSON data made of exact dicts, lists, strings, numbers, booleans and None is written here
    into one list instead, with json's own C string encoder. Anything else (a tuple, a subclass, a key that is no
    string, a cycle) is left to json, to format or to refuse as it always did."""
    parts: list[str] = []
    try:
        _indented(data, "\n", parts)
    except (_NotPlain, RecursionError):
        return json.dumps(data, ensure_ascii=False, indent=1)
    return "".join(parts)


class _NotPlain(Exception):
    """A value `indented_json` leaves to json."""


def _scalar(value: Any) -> str | None:
    """The JSON of a string, number, boolean or None as json writes it, or None for a container."""
    kind = type(value)
    if kind is str:
        return _encode_string(value)
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return int.__repr__(value)
    if kind is float:
        if math.isfinite(value):
            return float.__repr__(value)
        return "NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"  # json's allow_nan words
    if kind is dict or kind is list:
        return None
    raise _NotPlain


def _indented(value: Any, newline: str, parts: list[str]) -> None:
    """`value` at the nesting whose line break and indent is `newline`, appended to `parts`."""
    text = _scalar(value)
    if text is None:
        _container(value, newline, parts)
    else:
        parts.append(text)


def _container(value: dict[Any, Any] | list[Any], newline: str, parts: list[str]) -> None:
    """A dict or a list as json writes it with `indent=1`: each item on a line of its own, one space deeper."""
    if not value:
        parts.append("{}" if type(value) is dict else "[]")
        return
    inner = newline + " "
    sep = inner
    if type(value) is dict:
        parts.append("{")
        for key, item in value.items():
            if type(key) is not str:
                raise _NotPlain
            parts += (sep, _encode_string(key), ": ")
            _indented(item, inner, parts)
            sep = "," + inner
        parts.append(newline + "}")
        return
    parts.append("[")
    for item in value:
        parts.append(sep)
        _indented(item, inner, parts)
        sep = "," + inner
    parts.append(newline + "]")


def cut_line(text: str, width: int | None = LINE_CHARS) -> str:
    """A causal line as shown: whole, or its first `width` characters, then `…` and where it was cut, so a cut
    line is never mistaken for the whole line (`…cannot be converted to` was)."""
    if width is None or len(text) <= width:
        return text
    return f"{text[:width]}… [cut at column {width} of {len(text)}]"


def clip(text: str, width: int) -> str:
    """A message or name shortened to `width` characters, ending in `…` when it was."""
    return text if len(text) <= width else text[: width - 1] + "…"


# NEW first: what the change broke is what its author must read; the rest is someone else's.
_WHOSE_ORDER: tuple[AttributionLabel, ...] = ("new", "infra", "flaky", "inherited", "unknown")


def _whose_section(reports: Sequence[DiagnosisReport]) -> list[str]:
    """The failures grouped by attribution, each with its evidence links (nothing when none is attributed)."""
    groups: dict[AttributionLabel, list[str]] = {}
    for report in reports:
        for f in report.identifying_failures():
            if f.attribution is not None:
                groups.setdefault(f.attribution.label, []).append(
                    f"- `{_md(report.job or report.name())}`: {_md(clip(f.message, 100))} "
                    f"(`{short_fingerprint(f.fingerprint)}`): {_whose(f)}")
    if not groups:
        return []
    out = ["### RepoPilot: whose failures", ""]
    for label in _WHOSE_ORDER:
        if label in groups:
            out += [f"**{LABEL_TEXT[label]}** ({len(groups[label])})", "", *groups[label][:20], ""]
    return out


def render_markdown(reports: Sequence[DiagnosisReport], *, line_chars: int | None = LINE_CHARS) -> str:
    """The job summary / PR comment. Causal lines longer than `line_chars` are cut and marked (None: whole)."""
    out: list[str] = _whose_section(reports)
    for report in reports:
        failures = report.causal_failures()
        out.append(f"### RepoPilot: `{_md(report.name())}` failed: **{report.category}**")
        out.append("")
        out.append(f"Decided by {report.decided_by} (confidence {report.confidence:.2f}); "
                   f"{len(report.error_lines)} causal lines.")
        if report.model_note:
            out.append(f"\n_Model: {_md(report.model_note)}_")
        if report.summary:
            out.append(f"\n> {_md(report.summary)}")
        if failures:
            out.append("")
            out.append("| whose | rule | category | where | message | fingerprint |")
            out.append("|---|---|---|---|---|---|")
            for f in failures[:10]:
                out.append(f"| {_whose(f)} | `{f.rule}` | {f.category} | {_md(f.where()) or '-'} "
                           f"| {_md(clip(f.message, 120))} | `{short_fingerprint(f.fingerprint)}` |")
        for f in failures[:3]:
            out.append("")
            out.append(f"<details><summary><code>{_html(f.rule)}</code>: {_html(clip(f.message, 100))}</summary>")
            out.append("")
            out.append("```text")
            for item in f.lines[:30]:
                out.append(f"{item.line:>6} | {_code(cut_line(item.text, line_chars))}")
            out.append("```")
            out.append("</details>")
            if f.history is not None and f.history.text():
                out.append(f"\n_{_md(f.history.text())}_")
            if f.hint:
                out.append(f"\n**Hint:** {_md(f.hint)}")
        if not failures:
            out.append("\nNo known error pattern matched. Excerpt:\n\n```text")
            out.extend(_code(line) for line in split_lines(report.excerpt.text)[:40])
            out.append("```")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def _whose(f: ReportFailure) -> str:
    """The attribution with its evidence as links: `**NEW** ([main run 41](url))`."""
    a = f.attribution
    if a is None:
        return "-"
    links = [f"[{_md(e.text[:60]).replace('[', '(').replace(']', ')')}]({_url(e.url)})"
             if e.url and e.url.startswith(("https://", "http://")) else _md(e.text[:60]) for e in a.evidence[:2]]
    return f"**{a.headline()}**" + (f" ({'; '.join(links)})" if links else f" ({_md(a.why[:80])})")


def _url(url: str) -> str:
    """A URL the API gave, safe inside a Markdown link target."""
    return visible(url, newlines=False).replace(" ", "%20").replace("(", "%28").replace(")", "%29")


def split_lines(text: str) -> list[str]:
    """Lines on "\n" only, as the log's lines are numbered: splitlines() would also break at form feeds and the
    separators binary junk holds (0x1c-0x1e), inventing lines; the sanitiser shows those visibly instead."""
    return text.rstrip("\n").split("\n") if text else []


def _md(text: str) -> str:
    return visible(text.replace("\n", " "), newlines=False).replace("|", "\\|")


def _code(line: str) -> str:
    """One line inside a ```text block: it cannot close the fence."""
    return visible(line, newlines=False).replace("```", "` ` `")


def _html(text: str) -> str:
    return visible(text, newlines=False).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _escape_data(text: str) -> str:
    # CR and LF are the workflow-command format's own escapes; every other control is shown visibly.
    return visible(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(reports: Sequence[DiagnosisReport]) -> str:
    """`::error file=…,line=…,title=…::message` lines, at most MAX_ANNOTATIONS in all."""
    out: list[str] = []
    for report in reports:
        failures = report.causal_failures()
        if not failures:
            out.append(f"::error title={_escape_property('RepoPilot: ' + report.category)}::"
                       f"{_escape_data('No known error pattern matched in ' + report.name())}")
        for f in failures:
            props = []
            # GitHub places an annotation only at a repository-relative file; others say where in the message.
            if f.file and is_repo_relative(f.file):
                props.append(f"file={_escape_property(f.file)}")
                if f.line:
                    props.append(f"line={f.line}")
                if f.column:
                    props.append(f"col={f.column}")
            title = f"RepoPilot: {f.category} ({f.rule})"
            props.append(f"title={_escape_property(title)}")
            body = f.message
            if f.hint:
                body += f"\nHint: {f.hint}"
            if f.file and not is_repo_relative(f.file):
                body += f"\nAt {f.where()}"
            body += (f"\n(log {report.name()}, line {f.lines[0].line if f.lines else '?'}; "
                     f"fingerprint {short_fingerprint(f.fingerprint)})")
            if f.history is not None and f.history.text():
                body += f"\n{f.history.text()}"
            if f.attribution is not None:
                body += f"\n{f.attribution.headline()}: {f.attribution.why}"
            out.append(f"::error {','.join(props)}::{_escape_data(body)}")
    return "\n".join(out[:MAX_ANNOTATIONS]) + ("\n" if out else "")


RENDERERS: dict[str, Renderer] = {"json": render_json, "markdown": render_markdown, "github": render_github}
