"""What every `make/<ecosystem>/make.py` shares: its book of case makers (`Cases`, `@case`), the steps that run a
real tool (`passing`: a setup step that must succeed; `failing`: the step whose failure the case is about), and
the loop that makes the named cases one by one and writes them (`make_all`).

    CASES = Cases()
    case = CASES.case

    @case
    def pytest_assert(name: str, shape: str) -> Made:
        root = project(name, shape, files)
        steps = [passing("pip install -e .", root, env()),
                 failing("pytest -q", root, env(), "Pytest", lambda o: find(o, "^E   "))]
        ...

    def main(argv: list[str]) -> int:
        return make_all(CASES, argv, shape_from=1, write=lambda name, maker, shape, n: ...)
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from kit import shape_of
from record import find, run
from shapes import Step

__all__ = ["ANSI_COLOUR", "ANSI_CSI", "Cases", "failing", "make_all", "passing"]

ANSI_COLOUR = r"\x1b\[[0-9;]*m"  # colour codes only
ANSI_CSI = r"\x1b\[[0-9;]*[A-Za-z]"  # any CSI sequence (cursor moves too)

M = TypeVar("M", bound=Callable[..., Any])


class Cases(dict[str, M]):
    """Case makers by case name (the function's name, dashes for underscores), in the order they were defined:
    the order fixes each case's shape and seed, so a case is made the same way every time."""

    def case(self, fn: M) -> M:
        self[fn.__name__.replace("_", "-")] = fn
        return fn


def passing(cmd: str, root: Path, env: dict[str, str], title: str | None = None) -> Step:
    """A step that must succeed (an install, a build before the tests): its real output, titled by the command's
    first word unless `title` says otherwise."""
    out, code = run(cmd, cwd=root, env=env)
    assert code == 0, (cmd, out)
    return Step(title or cmd.split(maxsplit=1)[0].title(), cmd, out)


def failing(cmd: str, root: Path, env: dict[str, str], name: str, causal: Callable[[list[str]], list[int]], *,
            ctx: str | None = None, ctx_limit: int = 3, strip: str | None = None, shown: str | None = None) -> Step:
    """The step that must fail, labelled: `causal` (and the `ctx` pattern, for at most `ctx_limit` context lines)
    read its output with the `strip` pattern (say `ANSI_COLOUR`) removed; the step keeps the raw output. `shown` is
    the command as the log shows it, when that is not `cmd` itself."""
    out, code = run(cmd, cwd=root, env=env)
    assert code != 0, out
    plain = [re.sub(strip, "", t) for t in out] if strip else out
    return Step(name, shown or cmd, out, code, causal=causal(plain),
                context=find(plain, ctx, limit=ctx_limit) if ctx else [])


# `write(name, maker, shape, n)` runs the maker, writes its case and returns what to say and the case's folder.
Write = Callable[[str, M, str, int], tuple[str, Path]]


def make_all(cases: dict[str, M], names: list[str], *, shape_from: int, write: Write[M]) -> int:
    """Make the named cases (every case when none is named), each in the shape its place in the book gives. A case
    that fails is reported and the others go on (it can be made again by name). With CORPUS_REVIEW set, each
    written case's causal lines are printed for review."""
    for n, (name, maker) in enumerate(cases.items()):
        if names and name not in names:
            continue
        try:
            said, folder = write(name, maker, shape_of(n + shape_from), n)
        except Exception as exc:  # one broken case must not stop the others; it is reported and retried
            print("FAILED", name, type(exc).__name__, str(exc)[:3000])
            continue
        print("wrote", said)
        if os.environ.get("CORPUS_REVIEW"):
            _review(folder)
    return 0


def _review(folder: Path) -> None:
    lines = (folder / "fail.log").read_bytes().decode().split("\n")
    found = re.search(r"^causal = (\[.*\])$", (folder / "label.toml").read_text(), re.M)
    for span in json.loads(found.group(1)) if found else []:
        a, _, b = span.partition("-")
        for k in range(int(a), int(b or a) + 1):
            print(f"   {k:>4}: {lines[k - 1][:150]!r}")
