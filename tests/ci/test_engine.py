"""The diagnosis of real logs: category, causal lines against the hand labels, excerpts within budget,
baseline filtering, and escalation (one model call, validated, traced)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repopilot.ci import diagnose_source
from repopilot.ci.engine import diagnose_input
from repopilot.ci.escalate import parse_verdict
from repopilot.ci.sources import open_sources
from repopilot.core import TraceRecorder, load_trace
from repopilot.providers import ScriptedModel

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ci"

# (fixture, category, top rule, labelled E lines counted by `\n`, minimum precision)
CASES = [
    ("go-build-error.log", "build", "go.build-error", set(range(638, 645)) | {647}, 0.8),
    ("go-mod-fail.log", "dependency", "go.mod-tidy", {685}, 0.8),
    # An earlier `git diff` error in the job's script is also reported.
    ("maven-compile-error.log", "build", "maven.compile-error", {884} | set(range(898, 908)), 0.6),
    ("gradle-test-failure.log", "test", "gradle.test-failed", set(range(515, 536)), 0.8),
    ("docker-build.log", "network", "docker.registry-error", {809} | set(range(813, 826)), 0.8),
]


def _one(name: str, **kw: object) -> dict:
    reports = [r.contract() for r in diagnose_source(str(FIXTURES / name), **kw)]  # type: ignore[arg-type]
    assert len(reports) == 1
    return reports[0]


@pytest.mark.parametrize(("name", "category", "rule", "labelled", "precision"), CASES)
def test_real_logs(name: str, category: str, rule: str, labelled: set[int], precision: float) -> None:
    r = _one(name)
    assert r["category"] == category
    assert r["decided_by"] == "rules"
    assert r["failures"][0]["rule"] == rule
    lines = r["error_lines"]
    assert lines == sorted(set(lines)) and all(isinstance(n, int) for n in lines)
    hit = set(lines) & labelled
    assert len(hit) / len(labelled) >= 0.8, f"recall {len(hit)}/{len(labelled)}"
    assert len(hit) / len(lines) >= precision, f"precision {len(hit)}/{len(lines)}"
    assert r["excerpt"]["tokens"] <= 1500
    shown = {n for a, b in r["excerpt"]["ranges"] for n in range(a, b + 1)}
    assert labelled & shown, "the excerpt misses the error"
    # Line texts are the original lines (timestamps stripped).
    first = r["failures"][0]["lines"][0]
    raw = (FIXTURES / name).read_bytes().split(b"\n")[first["line"] - 1].decode("utf-8", "replace")
    assert first["text"].strip()[:20] in raw


def test_contract_shape() -> None:
    r = _one("go-build-error.log")
    for key in ("category", "decided_by", "error_lines", "failures", "excerpt", "source", "run_id"):
        assert key in r
    f = r["failures"][0]
    for key in ("rule", "category", "confidence", "message", "lines"):
        assert key in f
    assert f["file"] == "internal/command/cliconfig/credentials_test.go" and f["line"] == 88
    assert set(r["excerpt"]) == {"ranges", "tokens", "text", "folded"}
    assert r["failing_step"]["name"].startswith("go test")
    json.dumps(r)


def test_trailer_is_not_causal() -> None:
    r = _one("go-mod-fail.log")
    trailer = next(n for n, line in enumerate((FIXTURES / "go-mod-fail.log").read_bytes().split(b"\n"), 1)
                   if b"Process completed with exit code" in line)
    assert trailer not in r["error_lines"]
    assert trailer in {n for a, b in r["excerpt"]["ranges"] for n in range(a, b + 1)}  # but shown as context


@pytest.mark.parametrize("budget", [150, 400, 1500])
def test_excerpt_respects_budget(budget: int) -> None:
    for name, *_ in CASES:
        r = _one(name, token_budget=budget)
        assert 0 < r["excerpt"]["tokens"] <= budget
        assert r["excerpt"]["text"].count("\n") < 400


def test_baseline_drops_lines_the_passing_log_has(tmp_path: Path) -> None:
    fail = (FIXTURES / "go-mod-fail.log").read_bytes()
    # A passing log that shares the failing line (with another timestamp): it is no longer a candidate.
    line = fail.split(b"\n")[684]
    assert b"go.mod/go.sum are not up-to-date" in line
    shared = tmp_path / "pass.log"
    shared.write_bytes(b"2030-01-01T00:00:00.0000000Z " + line.split(b"Z ", 1)[1] + b"\n")
    plain = _one("go-mod-fail.log", baseline=str(FIXTURES / "go-mod-pass.log"))
    assert plain["error_lines"] == [685]
    dropped = _one("go-mod-fail.log", baseline=str(shared))
    assert 685 not in dropped["error_lines"]
    assert dropped["baseline_dropped"] >= 1


def test_unknown_log_without_model(tmp_path: Path) -> None:
    log = tmp_path / "odd.log"
    log.write_text("starting\n" + "working\n" * 50 + "something went wrong: the frobnicator failed\nbye\n")
    r = _one(str(log))
    assert r["decided_by"] == "none" and r["category"] == "unknown"
    assert r["error_lines"] == [52]  # the keyword fallback
    assert "frobnicator" in r["excerpt"]["text"]


def _unsure_log(tmp_path: Path) -> Path:
    log = tmp_path / "unsure.log"
    log.write_text("setup\nrunning\nthe widget exploded: failure in stage 3\ndone\n")
    return log


def _run(tmp_path: Path, model: ScriptedModel) -> tuple[dict, TraceRecorder]:
    rec = TraceRecorder.start("diagnose", "test", directory=tmp_path / "runs")
    log = open_sources(str(_unsure_log(tmp_path)))[0]
    res = diagnose_input(log, model=model, recorder=rec)
    return res.report().contract(), rec


def test_escalation_uses_one_validated_model_call(tmp_path: Path) -> None:
    model = ScriptedModel(['```json\n{"category": "build", "error_lines": [3, 999], "summary": "widget"}\n```'])
    report, rec = _run(tmp_path, model)
    assert len(model.calls) == 1 and model.calls[0]["tools"] == []
    assert report["decided_by"] == "llm" and report["category"] == "build"
    assert report["error_lines"] == [3]  # 999 is not a line the model was shown
    steps = load_trace(rec.trace.run_id, tmp_path / "runs").steps
    decisions = [s for s in steps if s.type == "decision"]
    assert any(s.detail.get("decision") == "escalate" and "no rule" in s.detail.get("why", "") for s in decisions)
    assert sum(s.type == "llm_call" for s in steps) == 1


@pytest.mark.parametrize("reply", ["not json at all", '{"category": "weather", "error_lines": [3]}',
                                   {"content": "", "tool_calls": [{"name": "read_file", "arguments": {}}]}])
def test_malformed_reply_keeps_heuristic_result(tmp_path: Path, reply: object) -> None:
    model = ScriptedModel([reply, '{"category": "build", "error_lines": [3]}'])
    report, rec = _run(tmp_path, model)
    assert len(model.calls) == 1
    assert report["decided_by"] == "none" and report["category"] == "unknown"
    assert report["error_lines"] == [3]
    steps = load_trace(rec.trace.run_id, tmp_path / "runs").steps
    assert any(s.type == "decision" and s.result in ("escalation_rejected", "escalation_failed") for s in steps)


def test_confident_rules_do_not_call_the_model(tmp_path: Path) -> None:
    model = ScriptedModel([])
    rec = TraceRecorder.start("diagnose", "test", directory=tmp_path / "runs")
    res = diagnose_input(open_sources(str(FIXTURES / "go-mod-fail.log"))[0], model=model, recorder=rec)
    assert model.calls == [] and res.diagnosis.decided_by == "rules"
    fired = [s for s in rec.trace.steps if s.type == "decision" and s.detail.get("decision") == "rules"]
    assert fired and fired[0].detail["fired"][0]["rule"] == "go.mod-tidy"


def test_parse_verdict() -> None:
    assert parse_verdict('x {"category": "lint", "error_lines": [1]} y').category == "lint"
    for bad in ("", "{", '{"category": "nope"}', '{"category": "lint", "error_lines": "1"}'):
        with pytest.raises(ValueError):
            parse_verdict(bad)


def test_long_stack_traces_are_folded(tmp_path: Path) -> None:
    frames = "".join(f"\tat com.acme.Service.call{i}(Service.java:{i})\n" for i in range(300))
    log = tmp_path / "trace.log"
    log.write_text("[INFO] start\n" + "java.lang.IllegalStateException: boom\n" + frames + "[INFO] end\n")
    r = _one(str(log), token_budget=300)
    ex = r["excerpt"]
    assert ex["tokens"] <= 300
    assert ex["folded"] and "lines folded" in ex["text"]
    covered = {n for a, b in ex["ranges"] for n in range(a, b + 1)}
    assert set(range(2, 303)) <= covered  # the whole trace is shown or folded
    folded = {n for a, b in ex["folded"] for n in range(a, b + 1)}
    assert 2 not in folded and 3 in covered  # the exception line itself is shown
