"""The excerpt: causal blocks shown whole when the budget allows, folded only as far as it requires, the trigger
lines always shown, repeats folded into one line when there is no room, never over budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from repopilot.ci import diagnose_source
from repopilot.ci.excerpt import estimate_tokens


def _excerpt(tmp_path: Path, text: str, budget: int) -> dict:
    log = tmp_path / "x.log"
    log.write_text(text)
    reports = [r.contract() for r in diagnose_source(str(log), token_budget=budget)]
    assert len(reports) == 1
    ex = reports[0]["excerpt"]
    assert ex["tokens"] <= budget and estimate_tokens(ex["text"]) == ex["tokens"]
    return ex


def _shown(ex: dict) -> set[int]:
    folded = {n for a, b in ex["folded"] for n in range(a, b + 1)}
    return {n for a, b in ex["ranges"] for n in range(a, b + 1)} - folded


def _trace(frames: int, name: str = "boom") -> str:
    return f"java.lang.IllegalStateException: {name}\n" + "".join(
        f"\tat com.acme.Service.call{i}(Service.java:{i})\n" for i in range(frames))


def test_trace_that_fits_is_not_folded(tmp_path: Path) -> None:
    ex = _excerpt(tmp_path, "[INFO] start\n" + _trace(30) + "[INFO] end\n", 1500)
    assert ex["folded"] == [] and "folded" not in ex["text"]
    assert set(range(2, 33)) <= _shown(ex)


def test_fold_only_as_far_as_the_budget_requires(tmp_path: Path) -> None:
    text = "[INFO] start\n" + _trace(300) + "[INFO] end\n"
    small, large = _excerpt(tmp_path, text, 400), _excerpt(tmp_path, text, 1500)
    assert small["folded"] and large["folded"]
    assert len(_shown(small)) < len(_shown(large))
    assert large["tokens"] > 1200  # the budget is used, not left idle behind a fixed fold
    for ex in (small, large):
        assert 2 in _shown(ex) and 302 in _shown(ex)  # the exception line and the trace's last frame


@pytest.mark.parametrize("budget", [300, 800])
def test_every_failure_keeps_its_trigger_line(tmp_path: Path, budget: int) -> None:
    text = "[INFO] start\n"
    triggers = []
    for k in range(5):
        triggers.append(text.count("\n") + 1)
        text += _trace(60, name=f"failure number {k}") + "[INFO] between\n"
    ex = _excerpt(tmp_path, text, budget)
    assert set(triggers) <= _shown(ex)


def test_repeats_are_shown_when_room_is_left_and_folded_otherwise(tmp_path: Path) -> None:
    text = "[INFO] start\n" + "".join(
        f"[INFO] step {k}\n[ERROR] Failed to execute goal on project core: Could not resolve dependencies\n"
        for k in range(12))
    roomy = _excerpt(tmp_path, text, 1500)
    assert roomy["folded"] == []
    tight = _excerpt(tmp_path, text, 150)
    assert any("repeated 9 more times" in line for line in tight["text"].splitlines())  # 12 = 3 shown + 9
    covered = {n for a, b in tight["ranges"] for n in range(a, b + 1)}
    assert {k * 2 + 3 for k in range(12)} <= covered  # every repeat is shown or folded


def test_long_lines_are_shortened_before_any_line_is_hidden(tmp_path: Path) -> None:
    tail = " because of a very long explanation that goes on" * 3
    frames = "".join(f"\tat com.acme.Service.call{i}(Service.java:{i}){tail}\n" for i in range(40))
    text = "[INFO] start\njava.lang.IllegalStateException: boom" + tail + "\n" + frames + "[INFO] end\n"
    ex = _excerpt(tmp_path, text, 1500)
    assert ex["folded"] == [] and set(range(2, 43)) <= _shown(ex)  # every line shown, none folded
    rows = ex["text"].splitlines()
    assert any(r.endswith(" …") and len(r) < 250 for r in rows)  # frames cut short
    assert any(tail.strip() in r for r in rows if "IllegalStateException" in r)  # the trigger line kept whole
