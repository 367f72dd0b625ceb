"""The fix benchmark's proposals, without running any toolchain: in every ecosystem the guard passes the correct and
the wrong fix and catches every weakening (the bench then checks what verification makes of them)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from fix_bench import proposals, unified
from fix_cases import ECOSYSTEMS, FUNCS

from repopilot.repo.guard import check_weakening


@pytest.mark.parametrize("eco", ECOSYSTEMS, ids=[e.name for e in ECOSYSTEMS])
def test_the_guard_on_every_proposal_of_the_bench(eco: object) -> None:
    for f in FUNCS:
        head, props = proposals(eco, f)  # type: ignore[arg-type]
        for p in props:
            diff = unified(head, p.files)
            assert diff, (f, p.kind)
            hits = check_weakening(diff).hits
            assert bool(hits) == (p.expected == "blocked"), (eco.name, f, p.kind, hits)  # type: ignore[attr-defined]
