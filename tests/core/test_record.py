"""Records (core/record.py) are dataclasses that pydantic validates when they are read back: a report or trace from
outside is checked field by field, nested records included, while one built in code is checked by mypy and by its
own `__post_init__` (the categories the contract allows)."""

from __future__ import annotations

import json

import pytest

from repopilot.ci import DiagnosisReport, ReportFailure, ReportLine, read_report
from repopilot.core import RunTrace, Step


def test_reading_back_validates_nested_records_and_ignores_unknown_keys() -> None:
    report = DiagnosisReport.model_validate({"category": "build", "confidence": "0.9", "new_field": 1,
                                             "failures": [{"rule": "go", "lines": [{"line": "3", "text": "x"}]}]})
    assert isinstance(report.failures[0].lines[0], ReportLine) and report.failures[0].lines[0].line == 3
    assert report.confidence == 0.9 and report.failures[0].fingerprint  # __post_init__ ran on the read record
    with pytest.raises(ValueError, match="category"):
        DiagnosisReport.model_validate({"category": "weather"})
    assert read_report({"failures": [{"lines": "not a list"}]}) is None


def test_a_record_built_in_code_is_checked_and_dumped_as_json() -> None:
    with pytest.raises(ValueError, match="not a category"):
        ReportFailure(rule="r", category="weather")  # type: ignore[arg-type]
    failure = ReportFailure(rule="r", confidence=1, lines=[ReportLine(line=2, text="boom")])
    report = DiagnosisReport(category="test", failures=[failure])
    report.excerpt.ranges.append((1, 2))
    data = report.model_dump(mode="json")
    assert data["excerpt"]["ranges"] == [[1, 2]] and data["failures"][0]["confidence"] == 1.0
    assert DiagnosisReport.model_validate(json.loads(json.dumps(data))) == report  # a round trip changes nothing
    assert report.model_copy(update={"trace_run_id": "r1"}).trace_run_id == "r1" and report.trace_run_id is None


def test_a_trace_read_back_is_validated() -> None:
    trace = RunTrace(run_id="r1", command="diagnose", goal="g")
    trace.steps.append(Step(step_number=1, timestamp="t", type="decision", detail={"why": ("a", "b")}))
    data = json.loads(json.dumps(trace.model_dump(mode="json")))
    read = RunTrace.model_validate(data)
    assert isinstance(read.steps[0], Step) and read.steps[0].detail == {"why": ["a", "b"]} and read.status == "running"
    with pytest.raises(ValueError):
        RunTrace.model_validate({**data, "steps": [{"step_number": 1, "timestamp": "t", "type": "nonsense"}]})
