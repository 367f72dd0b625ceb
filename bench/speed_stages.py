"""The stage profile of bench/speed.py: wraps the diagnosis's own steps with timers in a bench child process
(nothing here runs in the product). Stages are per call of a per-chunk or per-log step, so the timers cost
microseconds per MB; `other` is what no stage holds (the loop, the late hits' checks as chunks leave)."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from repopilot.ci import engine, scanner


def _timed(stages: dict[str, float], name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            stages[name] += time.perf_counter() - t0

    return wrapper


def _timed_pieces(stages: dict[str, float], fn: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
    """Reading and cleaning the log: the time spent getting each piece."""

    def wrapper(*args: Any, **kwargs: Any) -> Iterator[Any]:
        pieces = fn(*args, **kwargs)
        while True:
            t0 = time.perf_counter()
            piece = next(pieces, None)
            stages["read + clean (ANSI)"] += time.perf_counter() - t0
            if piece is None:
                return
            yield piece

    return wrapper


def install(sc: scanner.Scanner) -> dict[str, float]:
    names = ["read + clean (ANSI)", "engine scan", "line counting", "flagged lines", "late hits", "diagnosis",
             "locator", "excerpt", "trace write"]
    stages = dict.fromkeys(names, 0.0)
    scanner.located_pieces = _timed_pieces(stages, scanner.located_pieces)  # type: ignore[assignment]
    sc.engine.scan = _timed(stages, "engine scan", sc.engine.scan)  # type: ignore[method-assign]
    scanner.Scanner._locate = staticmethod(_timed(stages, "line counting", scanner.Scanner._locate))  # type: ignore[method-assign]
    scanner.Scanner._process = _timed(stages, "flagged lines", scanner.Scanner._process)  # type: ignore[method-assign]
    state = scanner._State
    state.finish = _timed(stages, "late hits", state.finish)  # type: ignore[method-assign]
    state.release = _timed(stages, "late hits", state.release)  # type: ignore[method-assign]
    engine.build_diagnosis = _timed(stages, "diagnosis", engine.build_diagnosis)  # type: ignore[attr-defined]
    engine.build_excerpt = _timed(stages, "excerpt", engine.build_excerpt)  # type: ignore[attr-defined]
    # The rule-independent locator (ci/located.py, ci/locator.py) and the category verdict, when the engine has them.
    for name, stage in (("apply_locator", "locator"), ("decide_category", "diagnosis")):
        fn = getattr(engine, name, None)
        if callable(fn):
            setattr(engine, name, _timed(stages, stage, fn))
    return stages


def finish(stages: dict[str, float], seconds: float, result: engine.Result) -> None:
    """Adds the trace write (what `repopilot diagnose` records: a run, its decision step, the report) and
    `other`: the in-process time no stage holds (the loops)."""
    from repopilot.core import TraceRecorder

    inside = sum(v for k, v in stages.items() if k != "trace write")
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        rec = TraceRecorder.start("diagnose", "diagnose bench", directory=Path(tmp))
        rec.step("decision", result="bench", detail={"decision": "rules"})
        rec.trace.set_reports([result.report().contract()])
        rec.finish("completed")
        stages["trace write"] += time.perf_counter() - t0
    stages["other"] = max(0.0, seconds - inside)
