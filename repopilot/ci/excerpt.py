"""The excerpt a model (or a person) reads instead of the log: the error blocks with a little context, the failing
step's header and tail, with line numbers, within a token budget. Never the whole log."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

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
    ranges: list[list[int]]  # lines shown or folded into a summary line
    tokens: int
    text: str
    folded: list[list[int]] = field(default_factory=list)  # the folded part of `ranges`


def _fmt(n: int, text: str) -> str:
    if len(text) > _MAX_LINE_CHARS:
        text = text[:_MAX_LINE_CHARS] + " …"
    return f"{n:>6} | {text}"


# Stack frames (Java `at ...`, `... N more`, Go `\t/path/file.go:12 +0x1f` and `pkg.func(...)` lines).
_FRAME = re.compile(r"^\s+at \S|^\s*\.\.\. \d+ (?:more|common frames omitted)|^\t+/\S+:\d+|^[\w./*()\[\]-]+\(.*\)$"
                    r"|^\s*(?:Caused by|Caused|Suppressed|Also):")
_FOLD_MIN = 6
_DIGITS = re.compile(r"\d+")
_SHAPE = 24  # characters of a line (digits masked) that make its shape
_SHAPE_WINDOW = 8
Item = int | tuple[int, int]  # a line shown, or an inclusive range folded into one summary line


def _fold(lines: list[int], texts: dict[int, str]) -> list[Item]:
    """Long runs of stack frames, or of lines shaped like one of the few before them (the same error repeated
    for many files, a multi-line diagnostic repeated), become: two lines, a fold line, the last line."""
    out: list[Item] = []
    run: list[int] = []
    recent: list[str] = []

    def flush() -> None:
        if len(run) >= _FOLD_MIN:
            out.extend(run[:2])
            out.append((run[2], run[-2]))
            out.append(run[-1])
        else:
            out.extend(run)
        run.clear()

    for n in lines:
        text = texts[n]
        key = _DIGITS.sub("#", text.strip())[:_SHAPE]
        foldable = bool(_FRAME.search(text)) or (len(key) >= 4 and key in recent)
        recent.append(key)
        if len(recent) > _SHAPE_WINDOW:
            recent.pop(0)
        if foldable and (not run or n == run[-1] + 1):
            run.append(n)
        else:
            flush()
            out.append(n)
    flush()
    return out


def _item_text(item: Item, texts: dict[int, str]) -> str:
    if isinstance(item, int):
        return _fmt(item, texts[item])
    a, b = item
    return f"{a:>6} | … {b - a + 1} lines folded ({a}-{b}): stack frames or lines like the ones around …"


def build_excerpt(diag: Diagnosis, budget: int = DEFAULT_TOKEN_BUDGET) -> Excerpt:
    """Pieces in order of importance, each added while the budget allows: the failing step's header, the causal
    blocks (long stack traces folded, very long blocks cut in the middle) with a little context, then the
    step's tail. `ranges` are the lines shown or folded into a summary line."""
    texts = dict(diag.texts)
    for m in diag.tail:
        texts.setdefault(m.line, m.text)
    for m in diag.keywords:
        texts.setdefault(m.line, m.text)

    pieces: list[list[Item]] = []
    step = diag.step
    if step is not None and step.header_line and step.header_line in texts:
        pieces.append([step.header_line])
    causal = [f for f in diag.failures if f.causal] or diag.failures[:3]
    error_set = set(diag.error_lines)
    for f in causal:
        for a, b in f.ranges():
            block = _fold([n for n in range(a, b + 1) if n in texts], texts)
            if len(block) > _BIG_BLOCK_HEAD + _BIG_BLOCK_TAIL:
                block = [*block[:_BIG_BLOCK_HEAD], *block[-_BIG_BLOCK_TAIL:]]
            before: list[Item] = [n for n in range(a - _CONTEXT, a) if n in texts]
            after: list[Item] = [n for n in range(b + 1, b + 1 + _CONTEXT) if n in texts]
            pieces.append(before + block + after)
    if not causal and error_set:
        heuristic: list[Item] = []
        heuristic.extend(n for n in sorted(error_set)[-40:] if n in texts)
        pieces.append(heuristic)
    # The failing step's tail (or the log's): what happened right before the job gave up.
    end = step.error_line if step is not None else diag.lines
    tail: list[Item] = []
    tail.extend(n for n in range(end - _STEP_TAIL + 1, end + 1) if n in texts)
    pieces.append(tail)

    chosen: set[Item] = set()
    used = estimate_tokens(_header(diag))
    for piece in pieces:
        new = [i for i in piece if i not in chosen]
        if not new:
            continue
        cost = sum(estimate_tokens(_item_text(i, texts)) + 1 for i in new) + 2
        if used + cost <= budget:
            chosen.update(new)
            used += cost
            continue
        # Fit what we can of this piece, the error lines first.
        for i in sorted(new, key=lambda k: (not (isinstance(k, int) and k in error_set), _start(k))):
            c = estimate_tokens(_item_text(i, texts)) + 1
            if used + c + 2 > budget:
                break
            chosen.add(i)
            used += c
    shown = {i for i in chosen if isinstance(i, int)}
    folds: list[Item] = []
    for fold in (i for i in chosen if not isinstance(i, int)):
        # Lines another piece shows (its context) split the fold; what remains stays folded.
        lo = fold[0]
        for n in [*sorted(k for k in shown if fold[0] <= k <= fold[1]), fold[1] + 1]:
            if n - 1 >= lo:
                folds.append((lo, n - 1))
            lo = n + 1
    merged = sorted(set(folds))
    items = sorted([*shown, *(f for i, f in enumerate(merged) if not _inside(f, merged[:i]))], key=_start)
    out = [_header(diag)]
    ranges: list[list[int]] = []
    prev_end: int | None = None
    for item in items:
        a, b = (item, item) if isinstance(item, int) else item
        if prev_end is not None and a > prev_end + 1:
            out.append("   ... |")
        if ranges and a <= ranges[-1][1] + 1:
            ranges[-1][1] = max(ranges[-1][1], b)
        else:
            ranges.append([a, b])
        out.append(_item_text(item, texts))
        prev_end = b if prev_end is None else max(prev_end, b)
    text = "\n".join(out)
    folded = [[i[0], i[1]] for i in items if not isinstance(i, int)]
    return Excerpt(ranges=ranges, tokens=estimate_tokens(text), text=text, folded=folded)


def _inside(fold: Item, others: list[Item]) -> bool:
    assert not isinstance(fold, int)
    return any(not isinstance(o, int) and o[0] <= fold[0] and fold[1] <= o[1] for o in others)


def _start(item: Item) -> int:
    return item if isinstance(item, int) else item[0]


def _header(diag: Diagnosis) -> str:
    where = f"{diag.name}: {diag.lines} lines"
    if diag.step is not None and diag.step.name:
        where += f"; failing step: {diag.step.name[:120]} (exit {diag.step.exit_code})"
    return where
