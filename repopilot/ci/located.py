"""What the locator adds to a diagnosis: where no rule fired confidently, its lines become the causal lines and
its blocks the failures the excerpt shows; every chosen line is recorded with the features that chose it."""

from __future__ import annotations

import bisect
import re

from .causal_lines import filler, foreign_frames, listed_offenders, value_lines
from .diagnosis import CONFIDENT, Diagnosis, Failure, is_trailer
from .fingerprint import LOCATOR
from .locator import LocatorModel, Scored, candidates, detect_shape, find_end, locate, score_lines
from .scanner import ScanResult

__all__ = ["LOCATOR_RULE", "apply_locator"]

LOCATOR_RULE = LOCATOR
_WEAK_RULES = {"github.error-annotation"}  # evidence that says only where, not what
_MAX_BLOCKS = 8
_ERRORISH = re.compile(r"\b(?:error|fatal|fail\w*|exception|panic|abort\w*|can't|cannot|could not|not ok|"
                       r"undefined|no such|not found|attempt to|invalid|unexpected)\b", re.IGNORECASE)


def _script_lines(texts: dict[int, str], res: ScanResult) -> set[int]:
    """Candidates inside a GitHub step's `##[group]Run` header (closed by `##[endgroup]` before the next group)
    or under an Azure task's start (its banner and script): the script the step runs, not its output."""
    heads = sorted(res.scripts)
    out: set[int] = set()
    for n in texts if heads else ():
        i = bisect.bisect_left(heads, n) - 1
        if i >= 0 and n <= res.scripts[heads[i]].line:
            out.add(n)
    groups, ends = res.groups, res.endgroups
    if not groups:
        return out
    starts = [g.line for g in groups]
    for n in texts:
        i = bisect.bisect_left(starts, n) - 1
        if i < 0 or not groups[i].text.startswith("##[group]Run "):
            continue
        k = bisect.bisect_right(ends, n)
        if k < len(ends) and (i + 1 == len(starts) or ends[k] < starts[i + 1]):
            out.add(n)
    return out


def _strong(f: Failure) -> bool:
    return f.causal and f.score >= CONFIDENT and f.rule not in _WEAK_RULES


def apply_locator(diag: Diagnosis, res: ScanResult, model: LocatorModel, dropped: set[int] | None = None) -> None:
    """Rules decide where they fire; where none fired confidently, the locator chooses the causal lines."""
    if any(_strong(f) for f in diag.failures):
        diag.decisions.append({"decision": "locator not used", "why": "a rule fired confidently"})
        before = set(diag.error_lines)
        grow_rule_blocks(diag, res, model, dropped)
        _tidy(diag, set(diag.error_lines) - before)
    else:
        _locate(diag, res, model, dropped)
        _add_lists(diag, res)
        _tidy(diag, set(diag.error_lines))


def _add_lists(diag: Diagnosis, res: ScanResult) -> None:
    """A tool no rule knows that reports through a list (`The following files have no licence information:` and
    the files): the header and its items are causal, as the guideline says of summary-only tools."""
    texts = {**candidates(res), **diag.texts}
    first, last = diag.region or (1, res.lines)
    listed = listed_offenders(texts, max(first, diag.job_first), min(last, diag.job_last or last))
    listed -= set(diag.error_lines)
    if not listed:
        return
    diag.error_lines = sorted(set(diag.error_lines) | listed)
    diag.texts = texts
    a, b = min(listed), max(listed)
    host = next((f for f in diag.failures if f.causal), None)
    if host is not None:
        host.extra_ranges.append((a, b))
    diag.decisions.append({"decision": "listed offenders", "lines": sorted(listed)[:20],
                           "why": "a header saying what is wrong with the items listed under it"})


def _tidy(diag: Diagnosis, chosen: set[int]) -> None:
    """The causal lines as the guideline reads an error's block. Of the lines the locator `chosen`, stack frames of
    the runtime, the runner and installed libraries stay in the failures' blocks (the excerpt shows them) but are
    not causal lines, nor are layout, advice, CI and count lines (ci/causal_lines.py), unless nothing else was
    chosen. (A rule's block is the rule's own decision.) The values of an assertion printed under a causal line
    (`Expected:` / `3`, `left: 14`) are causal."""
    drop = foreign_frames(chosen, diag.texts) | {n for n in chosen if filler(diag.texts.get(n, ""))}
    if drop and len(drop) < len(diag.error_lines):
        diag.error_lines = [n for n in diag.error_lines if n not in drop]
        diag.decisions.append({"decision": "context, not causal", "lines": sorted(drop)[:20],
                               "why": "stack frames outside the project's files, layout, advice, CI and count "
                                      "lines chosen beside better ones"})
    values = value_lines(diag.error_lines, diag.texts)
    if not values:
        return
    blocks = [(f, a, b) for f in diag.failures if f.causal for a, b in f.ranges()]
    for k in sorted(values):
        host = next((f for f, a, b in blocks if a <= k <= b + _VALUE_REACH), None)
        if host is not None and not any(a <= k <= b for _, a, b in blocks):
            host.extra_ranges.append((k, k))
    diag.error_lines = sorted(set(diag.error_lines) | values)
    diag.decisions.append({"decision": "assertion values", "lines": sorted(values)[:20],
                           "why": "the values an assertion printed under a causal line"})


_VALUE_REACH = 8


def _locate(diag: Diagnosis, res: ScanResult, model: LocatorModel, dropped: set[int] | None) -> None:
    texts = candidates(res)
    step = diag.step
    scripts = _script_lines(texts, res)
    skip = set(dropped or ()) | {n for n, t in texts.items() if is_trailer(t) or not diag.in_job(n)} | scripts
    start, end = diag.region or (None, None)
    if step is not None:
        start, end = step.header_line or None, step.error_line
    found = locate(texts, total=res.lines, model=model, exclude=skip, step_start=start, step_error_line=end)
    outside = [f for f in diag.failures if f.outside]
    if outside and max((s.probability for s in found.lines), default=0.0) < model.threshold:
        # Nothing in the failing step reads as an error: what rules found elsewhere stands (a step that went on
        # after an error, a failure reported by a later step).
        for f in outside:
            f.score, f.outside, f.causal = f.outside, 0.0, True
        diag.decisions.append({"decision": "locator not used", "why": "no line of the failing step reached "
                               f"{model.threshold:.2f}; the rules' findings outside it stand"})
        return
    if not found.lines:
        diag.decisions.append({"decision": "locator found nothing", "candidates": found.candidates,
                               "why": f"no candidate line reached {model.threshold:.2f}"})
        return
    by_line = {s.line: s for s in found.lines}
    blocks = []
    for a, b in found.blocks:
        scored = [by_line[n] for n in range(a, b + 1) if n in by_line]
        best = max(scored, key=lambda s: s.probability)
        # The block's message is its first error-shaped line (a stack's head, not its last frame).
        head = next((s for s in scored if _ERRORISH.search(texts.get(s.line, ""))), best)
        blocks.append((best.probability, a, b, head))
    groups = _one_error_each(blocks)
    # The likeliest errors first; among nearly as likely ones the earliest (a first error explains later ones).
    top = max(g[0][0] for g in groups)
    groups.sort(key=lambda g: (g[0][0] < 0.8 * top, g[0][1] if g[0][0] >= 0.8 * top else -g[0][0]))
    located: list[Failure] = []
    for (p, a, b, best), *rest in groups[:_MAX_BLOCKS]:
        text = texts.get(best.line, "")
        why = ", ".join(name for name, _ in best.why) or "its place in the log"
        located.append(Failure(
            rule=LOCATOR_RULE, category="unknown", confidence=round(p, 3), message=text.strip()[:300], first=a,
            last=b, extra_ranges=[(x[1], x[2]) for x in rest], trigger=best.line, tool=None, score=round(p, 3),
            causal=True,
            in_failing_step=step is not None and (step.header_line or 1) <= best.line <= step.error_line,
            note=f"chosen by the locator ({why})",
            hint="Read the marked lines: no rule knows this tool's output, so they were chosen by how error-like "
                 "they are and where they sit."))
    # Weak rule evidence (an `##[error]` annotation, a generic summary) stays causal beside the locator's lines:
    # it says where the tool itself reported an error.
    # What rules found outside the failing step (which no rule explained) gives way to what the locator found.
    elsewhere = {n for f in outside for a, b in f.ranges() for n in range(a, b + 1)}
    for f in outside:
        f.causal = False
    # A step's script header is the command, not its output (a keyword in `--stop-on-failure`).
    keep = {n for f in located for a, b in f.ranges() for n in range(a, b + 1)} | (
        set(diag.error_lines) - elsewhere - scripts)
    diag.failures = located + diag.failures
    diag.error_lines = sorted(keep)
    diag.texts = {**texts, **diag.texts}
    diag.located = True
    diag.decisions.append({
        "decision": "locator", "shape": found.shape, "end": found.end, "candidates": found.candidates,
        "threshold": model.threshold,
        "lines": [{"line": s.line, "p": round(s.probability, 3), "why": [k for k, _ in s.why]}
                  for s in sorted(found.lines, key=lambda s: s.line)[:60]],
        "why": "no rule fired confidently; the locator ranked the candidate lines"})


_ONE_ERROR_GAP = 3  # lines between two blocks of one error: a quoted source line, its caret, a blank line


def _one_error_each(blocks: list[tuple[float, int, int, Scored]]) -> list[list[tuple[float, int, int, Scored]]]:
    """Blocks a few lines apart grouped as one error, its likeliest block first: a tool prints `file:line`, the
    source and a caret, then the message, and whether the locator takes the header as a block of its own must not
    make one error two failures (two fingerprints for one failure, depending on the CI's line prefixes)."""
    groups: list[list[tuple[float, int, int, Scored]]] = []
    for block in sorted(blocks, key=lambda x: x[1]):
        if groups and block[1] - max(x[2] for x in groups[-1]) - 1 <= _ONE_ERROR_GAP:
            groups[-1].append(block)
        else:
            groups.append([block])
    return [sorted(g, key=lambda x: (-x[0], x[1])) for g in groups]


GROW_DOWN = 6  # lines a rule's block may grow by below its end, and above its start
GROW_UP = 2
GROW_FLOOR = 1.0  # share of the locator's threshold a neighbour must score to join
# Lines a block does not grow onto: a warning beside the error (not part of it), a section's ruled heading.
_NOT_GROWN = re.compile(r"^(?!.*\berror).*\bwarn(?:ing)?\b|^\s*[=_*#~-]{3,}.*[=_*#~-]{3,}\s*$", re.IGNORECASE)
_GROW_FAILURES = 5
_GROW_BLOCKS = 2
_GROW_CHARS = 300  # of a line, for its features: a minified bundle's line costs what an ordinary one does
_AROUND = 3  # lines scored beyond the growth's reach, for the features that read a line's neighbours


def grow_rule_blocks(diag: Diagnosis, res: ScanResult, model: LocatorModel, dropped: set[int] | None = None) -> None:
    """Rules decide where they fire; the locator extends their blocks to the whole error. A rule's block often
    stops at its trigger (a runner's heading, an error line whose message, stack or expected/actual pair follows
    on lines the rule does not describe, printed by a tool the rule was not written for): a neighbour of a causal
    block that the locator scores as likely as its own choices joins it, a few lines at most each way."""
    # The first causal failures (the ones the excerpt leads with), their first blocks: a log with hundreds of
    # errors costs no more than one with a few.
    causal = [f for f in diag.failures if f.causal and f.rule not in _WEAK_RULES and f.rule != LOCATOR_RULE]
    causal = causal[:_GROW_FAILURES]
    if not causal:
        return
    texts = candidates(res)
    start, end = diag.region or (None, None)
    if diag.step is not None:
        start, end = diag.step.header_line or None, diag.step.error_line
    # Only the lines around the blocks are scored (with the template and density features of that neighbourhood):
    # scoring every candidate would cost a confident diagnosis what the locator costs one that no rule explains.
    near = {n for f in causal for a, b in f.ranges()[:_GROW_BLOCKS]
            for n in (*range(a - GROW_UP - _AROUND, min(a + _AROUND, b + 1)),
                      *range(max(b - _AROUND, a), b + GROW_DOWN + _AROUND))}
    around = {n: texts[n][:_GROW_CHARS] for n in near if n in texts}
    skip = set(dropped or ()) | {n for n, t in around.items() if is_trailer(t) or not t.strip() or _NOT_GROWN.search(t)}
    skip |= _script_lines(around, res)
    around = {n: t for n, t in around.items() if n not in skip}
    if not around:
        return
    end = find_end(texts, res.lines, end)
    scored, _, _, _ = score_lines(around, total=res.lines, model=model, step_start=start, step_error_line=end,
                                  shape=detect_shape(texts.values()))
    likely = {s.line for s in scored if s.probability >= model.threshold * GROW_FLOOR}
    taken = set(diag.error_lines)
    grown: list[int] = []
    for f in causal:
        for a, b in f.ranges()[:_GROW_BLOCKS]:
            below = _run(b + 1, 1, GROW_DOWN, likely, taken)
            above = _run(a - 1, -1, GROW_UP, likely, taken)
            if below:
                f.extra_ranges.append((b + 1, below[-1]))
            if above:
                f.extra_ranges.append((above[-1], a - 1))
            grown += below + above
            taken.update(below + above)
    if grown:
        diag.error_lines = sorted(taken)
        diag.decisions.append({"decision": "blocks grown", "lines": sorted(grown),
                               "why": "neighbours of the rules' blocks that the locator scores at least "
                                      f"{model.threshold * GROW_FLOOR:.2f}"})


def _run(first: int, step: int, limit: int, likely: set[int], taken: set[int]) -> list[int]:
    """The likely lines from `first` on in direction `step`, up to `limit` of them, stopping at the first that is
    not likely or already causal."""
    out: list[int] = []
    n = first
    while len(out) < limit and n in likely and n not in taken:
        out.append(n)
        n += step
    return out
