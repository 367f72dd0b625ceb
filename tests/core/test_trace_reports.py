from repopilot.core import RunTrace


def test_one_report_is_stored_as_is_and_several_as_logs() -> None:
    t = RunTrace(run_id="r1", command="diagnose", goal="g")
    assert t.reports() == []
    t.set_reports([{"category": "test"}])
    assert t.diagnosis == {"category": "test"} and t.reports() == [{"category": "test"}]
    t.set_reports([{"category": "test"}, {"category": "lint"}])
    assert t.diagnosis == {"logs": [{"category": "test"}, {"category": "lint"}]}
    assert [r["category"] for r in t.reports()] == ["test", "lint"]


def test_early_fix_traces_still_read() -> None:
    t = RunTrace(run_id="r1", command="fix", goal="g", diagnosis={"reports": [{"category": "build"}]})
    assert t.reports() == [{"category": "build"}]
