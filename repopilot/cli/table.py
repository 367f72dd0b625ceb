"""The one table renderer of the CLI. On a terminal: a rich table fitted to the terminal's width, one line per
row (the free-text column cut with `…`, the least useful columns dropped when there is no room for them; at 80
columns every table fits). Piped: aligned plain columns with every column, easy to cut and grep."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import typer
from rich.console import JustifyMethod
from rich.table import Table

from ..core.sanitize import visible
from .console import out, shown, stdout_is_terminal

__all__ = ["Column", "fit", "print_table"]

_GAP = 3  # a cell's right padding, the rule between columns, the next cell's left padding
_FLEX_MIN = 20  # the free-text column is worth showing only with at least this much room


@dataclass(frozen=True)
class Column:
    header: str
    right: bool = False  # right-aligned (numbers)
    flexible: bool = False  # free text: gets the room the others leave, cut with `…`
    fold: bool = False  # folded over several lines rather than cut (values a person must read whole)
    drop: int = 0  # 0: always shown; on a narrow terminal the highest is dropped first
    cap: int | None = None  # at most this many characters on a terminal (cut with `…`)
    short: Callable[[str], str] | None = None  # an abbreviation for a terminal (piped output keeps the whole)

    def cell(self, text: str) -> str:
        """`text` as this column shows it on a terminal."""
        return _cut(self.short(text) if self.short else text, self.cap)


def _cut(text: str, cap: int | None) -> str:
    return text if cap is None or len(text) <= cap else text[: cap - 1] + "…"


def _widest(columns: Sequence[Column], rows: Sequence[Sequence[str]]) -> list[int]:
    return [max([len(c.header), *(len(c.cell(r[i])) for r in rows)]) for i, c in enumerate(columns)]


def fit(columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int) -> tuple[list[int], int]:
    """The columns shown at `width` (all when they fit, else without the droppable ones, highest `drop` first)
    and the room left for the free-text and folded columns."""
    widest = _widest(columns, rows)
    kept = list(range(len(columns)))

    def room() -> int:
        loose = [i for i in kept if columns[i].flexible or columns[i].fold]
        fixed = sum(widest[i] for i in kept if i not in loose)
        return width - fixed - _GAP * (len(kept) - 1) - _FLEX_MIN * max(0, len(loose) - 1)

    while room() < _FLEX_MIN:
        droppable = [i for i in kept if columns[i].drop]
        if not droppable:
            break
        kept.remove(max(droppable, key=lambda i: columns[i].drop))
    return kept, room()


def print_table(columns: Sequence[Column], rows: Sequence[Sequence[str]], *,
                styles: Sequence[Sequence[str]] | None = None) -> None:
    """Untrusted cells are fine: every cell passes the sanitiser."""
    if not stdout_is_terminal():
        _print_plain(columns, rows)
        return
    kept, room = fit(columns, rows, out.width)
    widest = _widest(columns, rows)
    table = Table(show_edge=False, pad_edge=False, header_style="bold")
    for i in kept:
        c = columns[i]
        justify: JustifyMethod = "right" if c.right else "left"
        if c.fold:
            table.add_column(c.header, justify=justify, overflow="fold")
        elif c.flexible:
            table.add_column(c.header, justify=justify, no_wrap=True, overflow="ellipsis",
                             max_width=max(room, len(c.header)))
        else:
            table.add_column(c.header, justify=justify, no_wrap=True, min_width=widest[i])
    for r, row in enumerate(rows):
        cells = []
        for i in kept:
            cell = shown(columns[i].cell(row[i]), newlines=False)
            style = styles[r][i] if styles else ""
            cells.append(f"[{style}]{cell}[/{style}]" if style and cell else cell)
        table.add_row(*cells)
    out.print(table)


def _print_plain(columns: Sequence[Column], rows: Sequence[Sequence[str]]) -> None:
    cleaned = [[visible(c, newlines=False) for c in row] for row in rows]
    headers = [c.header for c in columns]
    widths = [max(len(h), *(len(r[i]) for r in cleaned)) for i, h in enumerate(headers)]
    for row in [headers, *cleaned]:
        cells = [c.rjust(w) if columns[i].right else c.ljust(w)
                 for i, (c, w) in enumerate(zip(row, widths, strict=True))]
        typer.echo("  ".join(cells).rstrip())
