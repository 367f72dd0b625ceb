import json
from pathlib import Path

import pytest

from repopilot.cli.main import main
from repopilot.core import load_trace

LOG = Path(__file__).parent.parent / "fixtures" / "ci" / "go-build-error.log"


def test_json_report_names_its_trace(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diagnose", str(LOG), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    trace = load_trace(report["trace_run_id"])
    assert trace.command == "diagnose" and trace.status == "completed"
    assert trace.diagnosis is not None and trace.diagnosis["error_lines"] == report["error_lines"]
    assert any(s.type == "decision" for s in trace.steps)
