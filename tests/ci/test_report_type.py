"""The diagnosis report is a type: the published JSON schema is generated from it, the JSON keeps its shape, and
reports recorded by older versions are still read."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from repopilot.ci import DiagnosisReport, diagnose_source, read_report, report_schema
from repopilot.core import RunTrace

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "ci"


def _schema_text() -> str:
    spec = importlib.util.spec_from_file_location("write_schema", ROOT / "scripts" / "write_schema.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text: str = module.schema_text()
    return text


def test_published_schema_is_the_model() -> None:
    published = (ROOT / "docs" / "diagnosis-report.schema.json").read_text()
    assert published == _schema_text(), "run `python scripts/write_schema.py` and commit docs/"


def _check(obj: dict[str, Any], schema: dict[str, Any]) -> None:
    missing = set(schema.get("required", [])) - set(obj)
    unknown = set(obj) - set(schema["properties"])
    assert not missing and not unknown, (missing, unknown)


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.log")))
def test_reports_have_the_schemas_keys(name: str) -> None:
    schema = report_schema()
    defs = schema["$defs"]
    for report in diagnose_source(str(FIXTURES / name)):
        data = json.loads(json.dumps(report.contract()))
        _check(data, schema)
        for failure in data["failures"]:
            _check(failure, defs["ReportFailure"])
            assert all(v is not None for v in failure.values())  # optional fields are left out, never null
        _check(data["excerpt"], defs["ExcerptInfo"])
        assert DiagnosisReport.model_validate(data).contract() == data  # a round trip changes nothing


def test_old_traces_are_still_read() -> None:
    # A fix run recorded before reports had a type: "reports" instead of "logs", no engine/lines/bytes, and a
    # key this version does not know.
    old = {"reports": [{"category": "test", "decided_by": "rules", "error_lines": [7], "source": "ci.log",
                        "run_id": None, "legacy": 1,
                        "failures": [{"rule": "pytest-assert", "category": "test", "confidence": 0.9,
                                      "message": "boom", "file": "t.py", "line": 5,
                                      "lines": [{"line": 7, "text": "E boom"}]}],
                        "excerpt": {"ranges": [[5, 9]], "tokens": 3, "text": "     7 | E boom"}}]}
    trace = RunTrace(run_id="r1", command="fix", goal="g", diagnosis=old)
    [recorded] = trace.reports()
    report = read_report(recorded)
    assert report is not None and report.failures[0].where() == "t.py:5" and report.excerpt.ranges == [(5, 9)]
    assert read_report({"failures": [{"no": "rule"}]}) is None
