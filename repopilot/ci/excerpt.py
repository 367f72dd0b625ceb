"""The excerpt a model (or a person) reads instead of the log: the error blocks with a little context, the failing
step's header and tail, with line numbers, within a token budget. Never the whole log."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the settings read DEFAULT_TOKEN_BUDGET: that must not import the whole diagnosis
    from .diagnosis import Diagnosis

__all__ = ["DEFAULT_TOKEN_BUDGET", "Excerpt", "build_excerpt", "estimate_tokens"]

DEFAULT_TOKEN_BUDGET = 1500
_CONTEXT = 2
_MAX_LINE_CHARS = 240
_MIN_LINE_CHARS = 120  # under budget pressure, a block's other lines are shortened to no less than this
_STEP_TAIL = 12


def estimate_tokens(text: str) -> int:
    return (len(text) + 3) // 4


@dataclass
class Excerpt:
    """The numbered log lines a model is given within a token budget."""

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
_MIN_RUN_KEEP = 3  # a folded run still shows its first two lines and its last
_MIN_BLOCK_KEEP = 4
_DIGITS = re.compile(r"\d+")
_SHAPE = 24  # characters of a line (digits masked) that make its shape
_SHAPE_WINDOW = 8
_GAP_TOKENS = 3  # the `   ... |` line between stretches that are not adjacent
_RUN_NOTE = "stack frames, or lines repeating the ones shown"
_CUT_NOTE = "more lines of this error block"
Item = int | tuple[int, int]  # a line shown, or an inclusive range folded into one summary line


def _runs(lines: list[int], texts: dict[int, str]) -> list[tuple[int, int]]:
    """Index ranges (inclusive) of `lines` that may be folded: long runs of stack frames, or of lines shaped like
    one of the few before them (the same error repeated for many files, a multi-line diagnostic repeated)."""
    out: list[tuple[int, int]] = []
    recent: list[str] = []
    start = -1
    for i, n in enumerate(lines):
        text = texts[n]
        key = _DIGITS.sub("#", text.strip())[:_SHAPE]
        foldable = bool(_FRAME.search(text)) or (len(key) >= 4 and key in recent)
        recent.append(key)
        if len(recent) > _SHAPE_WINDOW:
            recent.pop(0)
        contiguous = i > 0 and n == lines[i - 1] + 1
        if foldable and start >= 0 and contiguous:
            continue
        if start >= 0 and i - start >= _FOLD_MIN:
            out.append((start, i - 1))
        start = i if foldable else -1
    if start >= 0 and len(lines) - start >= _FOLD_MIN:
        out.append((start, len(lines) - 1))
    return out


@dataclass
class _Block:
    """One causal block: its lines (those with text), the foldable runs among them, and the trigger."""

    lines: list[int]
    runs: list[tuple[int, int]]
    trigger: int

    def kept(self, run_cap: int | None, block_cap: int | None) -> list[int]:
        """The lines shown when runs are cut to `run_cap` lines and the block to `block_cap` (None: no cap).
        Cuts take the middle: a trace's head says what failed, its tail where it entered the code."""
        drop: set[int] = set()
        if run_cap is not None:
            for a, b in self.runs:
                if b - a + 1 > run_cap:
                    tail = run_cap // 3
                    drop.update(range(a + run_cap - tail, b + 1 - tail))
        kept = [n for i, n in enumerate(self.lines) if i not in drop]
        if block_cap is not None and len(kept) > block_cap:
            tail = block_cap // 4
            kept = sorted({*kept[:block_cap - tail], *kept[len(kept) - tail:]} | {self.trigger} & set(kept))
        return kept


def _items(kept: list[int], lines: list[int], note: str, notes: dict[tuple[int, int], str]) -> list[Item]:
    """`kept` lines of a block, with each stretch of its other lines as one fold (a lone line is just shown)."""
    out: list[Item] = []
    index = {n: i for i, n in enumerate(lines)}
    prev = -1
    for n in [*kept, None]:
        i = len(lines) if n is None else index[n]
        gap = lines[prev + 1:i]
        if len(gap) == 1:
            out.append(gap[0])
        elif gap:
            fold = (gap[0], gap[-1])
            notes.setdefault(fold, note)
            out.append(fold)
        if n is not None:
            out.append(n)
        prev = i
    return out


def _item_text(item: Item, texts: dict[int, str], notes: dict[tuple[int, int], str]) -> str:
    if isinstance(item, int):
        return _fmt(item, texts[item])
    a, b = item
    what = notes.get(item) or next((note for (lo, hi), note in notes.items() if lo <= a and b <= hi), _RUN_NOTE)
    return f"{a:>6} | … {b - a + 1} lines folded ({a}-{b}): {what} …"


class _Budget:
    """The items chosen so far and an upper bound of their rendered tokens (each line rounded up, plus the gap
    lines between stretches), kept exact enough that the rendered excerpt never exceeds the budget."""

    def __init__(self, texts: dict[int, str], notes: dict[tuple[int, int], str], base: int, budget: int) -> None:
        self.texts, self.notes, self.base, self.budget = texts, notes, base, budget
        self.items: set[Item] = set()
        self._cost: dict[Item, int] = {}

    def narrow(self, lines: list[int], width: int, original: dict[int, str]) -> None:
        """Show `lines` cut to `width` characters (from their `original` text)."""
        for n in lines:
            text = original[n]
            self.texts[n] = text if len(text) <= width else text[:width] + " …"
            self._cost.pop(n, None)

    def cost_of(self, item: Item) -> int:
        c = self._cost.get(item)
        if c is None:
            c = estimate_tokens(_item_text(item, self.texts, self.notes)) + 1
            self._cost[item] = c
        return c

    def total(self, items: set[Item]) -> int:
        shown = _normalize(items, self.texts)
        return self.base + sum(self.cost_of(i) for i in shown) + _GAP_TOKENS * _gaps(shown)

    def fits(self, extra: Sequence[Item]) -> bool:
        return self.total(self.items | set(extra)) <= self.budget

    def add(self, extra: Sequence[Item]) -> bool:
        if self.fits(extra):
            self.items.update(extra)
            return True
        return False

    def add_partly(self, extra: Sequence[Item], limit: int | None = None) -> None:
        """Add the items one by one while they fit (and, with `limit`, after the first, while all of them cost
        less than that)."""
        start = self.total(self.items)
        for i, item in enumerate(extra):
            if self.budget - self.total(self.items) < _GAP_TOKENS + 2:
                break  # nothing more can fit
            if limit is not None and i and self.total(self.items | {item}) - start > limit:
                break
            self.add([item])


def _gaps(items: list[Item]) -> int:
    gaps = 0
    reach: int | None = None
    for item in items:
        if reach is not None and _start(item) > reach + 1:
            gaps += 1
        reach = _end(item) if reach is None else max(reach, _end(item))
    return gaps


def _normalize(items: set[Item], texts: dict[int, str]) -> list[Item]:
    """The items as rendered, in order: a fold split by lines shown inside it (another piece's context), a fold
    inside another dropped, a fold left with one line shown as that line."""
    shown = {i for i in items if isinstance(i, int)}
    pieces: set[Item] = set()
    for fold in (i for i in items if not isinstance(i, int)):
        lo = fold[0]
        for n in [*sorted(k for k in shown if fold[0] <= k <= fold[1]), fold[1] + 1]:
            if n - 1 == lo and lo in texts:
                pieces.add(lo)
            elif n - 1 >= lo:
                pieces.add((lo, n - 1))
            lo = n + 1
    ints = shown | {p for p in pieces if isinstance(p, int)}
    folds = sorted((p for p in pieces if not isinstance(p, int)), key=lambda f: (f[0], -f[1]))
    kept: list[Item] = []
    reach = 0
    for f in folds:
        if f[1] <= reach:
            continue  # inside an earlier, wider fold
        kept.append(f)
        reach = f[1]
    return sorted([*ints, *kept], key=_start)


def _end(item: Item) -> int:
    return item if isinstance(item, int) else item[1]


def _fit_blocks(blocks: list[_Block], budget: _Budget, notes: dict[tuple[int, int], str]) -> None:
    """Show the causal blocks whole when they fit; else cut the longest foldable runs (stack frames, repeats)
    to the largest common length that fits; else also cut each block to the largest common length that fits;
    else as many blocks as fit, in order of importance. Each search is a bisection on the cap."""

    def items(run_cap: int | None, block_cap: int | None) -> list[Item]:
        out: list[Item] = []
        for b in blocks:
            note = _RUN_NOTE if block_cap is None else f"{_RUN_NOTE}; {_CUT_NOTE}"
            out.extend(_items(b.kept(run_cap, block_cap), b.lines, note, notes))
        return out

    if not blocks or budget.add(items(None, None)):
        return
    # Shorten long lines before hiding any: every line of every block stays visible, with its start (the
    # trigger lines, the real errors, keep their full width).
    triggers = {b.trigger for b in blocks}
    others = [n for b in blocks for n in b.lines if n not in triggers and len(budget.texts[n]) > _MIN_LINE_CHARS]
    original = {n: budget.texts[n] for n in others}

    def fits_at(width: int) -> bool:
        budget.narrow(others, width, original)
        return budget.fits(items(None, None))

    if others and fits_at(_MIN_LINE_CHARS):
        fits_at(_bisect(_MIN_LINE_CHARS, _MAX_LINE_CHARS, fits_at))
        budget.add(items(None, None))
        return
    longest_run = max((b - a + 1 for blk in blocks for a, b in blk.runs), default=0)
    if longest_run > _MIN_RUN_KEEP and budget.fits(items(_MIN_RUN_KEEP, None)):
        budget.add(items(_bisect(_MIN_RUN_KEEP, longest_run, lambda k: budget.fits(items(k, None))), None))
        return
    longest = max(len(b.lines) for b in blocks)
    if longest > _MIN_BLOCK_KEEP and budget.fits(items(_MIN_RUN_KEEP, _MIN_BLOCK_KEEP)):
        cap = _bisect(_MIN_BLOCK_KEEP, longest, lambda c: budget.fits(items(_MIN_RUN_KEEP, c)))
        budget.add(items(_MIN_RUN_KEEP, cap))
        return
    # Too many blocks even cut short: every trigger line (the real error) first, then the shortest form of as
    # many blocks as fit, in order of importance.
    budget.add_partly([b.trigger for b in blocks])
    for b in blocks:
        budget.add(_items(b.kept(_MIN_RUN_KEEP, _MIN_BLOCK_KEEP), b.lines, _CUT_NOTE, notes))


def _bisect(lo: int, hi: int, ok: Callable[[int], bool]) -> int:
    """The largest value in [lo, hi] for which `ok` holds, given that it holds for `lo` and is monotone."""
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def build_excerpt(diag: Diagnosis, budget: int = DEFAULT_TOKEN_BUDGET) -> Excerpt:
    """Pieces in order of importance, each added while the budget allows: the failing step's header, the causal
    blocks (folded only as far as the budget requires), later repeats of a failure, a little context around
    the blocks, then the step's tail. `ranges` are the lines shown or folded into a summary line."""
    texts = dict(diag.texts)
    for m in diag.tail:
        texts.setdefault(m.line, m.text)
    for m in diag.keywords:
        texts.setdefault(m.line, m.text)

    notes: dict[tuple[int, int], str] = {}
    chosen = _Budget(texts, notes, estimate_tokens(_header(diag)) + 1, budget)
    step = diag.step
    if step is not None and step.header_line and step.header_line in texts:
        chosen.add([step.header_line])
    causal = [f for f in diag.failures if f.causal] or diag.failures[:3]
    blocks: list[_Block] = []
    spans: list[tuple[int, int]] = []
    seen: set[int] = set()
    for f in causal:
        for a, b in f.ranges():
            lines = [n for n in range(a, b + 1) if n in texts and n not in seen]
            if not lines:
                continue
            seen.update(lines)
            spans.append((a, b))
            trigger = f.trigger if f.trigger in lines else lines[0]
            blocks.append(_Block(lines, _runs(lines, texts), trigger))
    if not causal and diag.error_lines:
        for n in [k for k in diag.error_lines if k in texts][-40:]:
            blocks.append(_Block([n], [], n))
            spans.append((n, n))
    # Later repeats of the same failure: one fold line per stretch of them is reserved before the blocks are
    # fitted (cheap, and it says how often the failure recurred); the repeats are shown instead if room is left.
    repeats: list[list[int]] = []
    for f in causal:
        if not f.more_ranges:
            continue
        stretches = _merge(f.more_ranges)
        starts = sorted(r[0] for r in f.more_ranges)
        for a, b in stretches:
            times = bisect.bisect_right(starts, b) - bisect.bisect_left(starts, a)
            notes[(a, b)] = f"the failure above repeated {times} more times"
        chosen.add_partly([s for s in stretches if not any(n in seen for n in range(s[0], s[1] + 1))],
                          limit=budget // 10)
        repeats.append([n for a, b in f.more_ranges for n in range(a, b + 1) if n in texts and n not in seen])
    _fit_blocks(blocks, chosen, notes)
    for lines in repeats:
        chosen.add(lines)
    # A little context around each block, then the failing step's tail (or the log's).
    for a, b in spans:
        around: list[Item] = [n for n in (*range(a - _CONTEXT, a), *range(b + 1, b + 1 + _CONTEXT)) if n in texts]
        if not chosen.add(around):
            chosen.add_partly(around)
    end = step.error_line if step is not None else diag.lines
    # The step's tail stays inside the step: before its header lie other steps (or, in a log of several jobs,
    # another job's lines, left empty).
    start = max(end - _STEP_TAIL, step.header_line - 1 if step is not None and step.header_line else 0)
    tail: list[Item] = [n for n in range(end, start, -1) if n in texts]
    if not chosen.add(tail):
        chosen.add_partly(tail)

    items = _normalize(chosen.items, texts)
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
        out.append(_item_text(item, texts, notes))
        prev_end = b if prev_end is None else max(prev_end, b)
    text = "\n".join(out)
    folded = [[i[0], i[1]] for i in items if not isinstance(i, int)]
    return Excerpt(ranges=ranges, tokens=estimate_tokens(text), text=text, folded=folded)


def _merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1] + 2:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _start(item: Item) -> int:
    return item if isinstance(item, int) else item[0]


def _header(diag: Diagnosis) -> str:
    where = f"{diag.name}: {diag.lines} lines"
    if diag.step is not None and (diag.step_name or diag.step.name):
        where += f"; failing step: {(diag.step_name or diag.step.name)[:120]} (exit {diag.step.exit_code})"
    return where
