"""The excerpt a model (or a person) reads instead of the log: the error blocks with a little context, the failing
step's header and tail, with line numbers, within a token budget. Never the whole log."""

from __future__ import annotations

from dataclasses import dataclass

from .diagnosis import Diagnosis

__all__ = ["DEFAULT_TOKEN_BUDGET", "Excerpt", "build_excerpt", "estimate_tokens"]

DEFAULT_TOKEN_BUDGET = 1500
_CONTEXT = 2
_MAX_LINE_CHARS = 240
_BIG_BLOCK_HEAD = 25
_BIG_BLOCK_TAIL = 8
_STEP_TAIL = 12


def estimate_tokens(text: str) -> int:
    return (len(text) + 3) // 4


@dataclass
class Excerpt:
    ranges: list[list[int]]
    tokens: int
    text: str


def _fmt(n: int, text: str) -> str:
    if len(text) > _MAX_LINE_CHARS:
        text = text[:_MAX_LINE_CHARS] + " …"
    return f"{n:>6} | {text}"


def build_excerpt(diag: Diagnosis, budget: int = DEFAULT_TOKEN_BUDGET) -> Excerpt:
    """Pieces in order of importance, each added while the budget allows (a big block is cut in the middle)."""
    texts = dict(diag.texts)
    for m in diag.tail:
        texts.setdefault(m.line, m.text)
    for m in diag.keywords:
        texts.setdefault(m.line, m.text)

    pieces: list[list[int]] = []  # each a list of line numbers, shown in file order in the end
    step = diag.step
    if step is not None and step.header_line:
        pieces.append([step.header_line])
    causal = [f for f in diag.failures if f.causal] or diag.failures[:3]
    error_set = set(diag.error_lines)
    for f in causal:
        for a, b in f.ranges():
            block = [n for n in range(a, b + 1) if n in texts]
            if len(block) > _BIG_BLOCK_HEAD + _BIG_BLOCK_TAIL:
                block = block[:_BIG_BLOCK_HEAD] + block[-_BIG_BLOCK_TAIL:]
            ctx = [n for n in range(a - _CONTEXT, a) if n in texts] + block + \
                [n for n in range(b + 1, b + 1 + _CONTEXT) if n in texts]
            pieces.append(ctx)
    if not causal and error_set:
        pieces.append([n for n in sorted(error_set) if n in texts][-40:])
    # The failing step's tail (or the log's): what happened right before the job gave up.
    end = step.error_line if step is not None else diag.lines
    tail = [n for n in range(end - _STEP_TAIL + 1, end + 1) if n in texts]
    pieces.append(tail)

    shown: set[int] = set()
    used = estimate_tokens(_header(diag))
    for piece in pieces:
        new = [n for n in piece if n not in shown]
        if not new:
            continue
        cost = sum(estimate_tokens(_fmt(n, texts[n])) + 1 for n in new) + 2
        if used + cost <= budget:
            shown.update(new)
            used += cost
            continue
        # Fit what we can of this piece, most important lines (the error lines) first.
        for n in sorted(new, key=lambda k: (k not in error_set, k)):
            c = estimate_tokens(_fmt(n, texts[n])) + 1
            if used + c + 2 > budget:
                break
            shown.add(n)
            used += c
    ordered = sorted(shown)
    out = [_header(diag)]
    ranges: list[list[int]] = []
    prev = None
    for n in ordered:
        if prev is not None and n != prev + 1:
            out.append("   ... |")
        if ranges and n == ranges[-1][1] + 1:
            ranges[-1][1] = n
        else:
            ranges.append([n, n])
        out.append(_fmt(n, texts[n]))
        prev = n
    text = "\n".join(out)
    return Excerpt(ranges=ranges, tokens=estimate_tokens(text), text=text)


def _header(diag: Diagnosis) -> str:
    where = f"{diag.name}: {diag.lines} lines"
    if diag.step is not None and diag.step.name:
        where += f"; failing step: {diag.step.name[:120]} (exit {diag.step.exit_code})"
    return where
