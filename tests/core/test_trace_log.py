"""The trace as an append-only event log: each step written once, a torn last line tolerated, old traces read,
clean failures when the disk is full."""

from __future__ import annotations

import errno
import itertools
import json
import os
from pathlib import Path
from typing import Any

import pytest

from repopilot.core import (
    REDACTED,
    Agent,
    Budgets,
    ConfigError,
    InputError,
    Redactor,
    SystemMessage,
    ToolRegistry,
    TraceRecorder,
    UserMessage,
    load_trace,
    read_trace,
    tool,
)
from repopilot.core import trace_log as trace_log_mod
from repopilot.providers import ScriptedModel

SECRET = "s3cr3t-value-for-the-trace-tests"


@tool
def echo(text: str) -> str:
    """Echo the text back.

    Args:
        text: What to echo.
    """
    return f"echo: {text}"


def _calls(n: int) -> list[Any]:
    return [{"tool_calls": [{"name": "echo", "arguments": {"text": f"call {i} {SECRET}"}}]} for i in range(n)] \
        + ["done"]


def _run(tmp_path: Path, n: int) -> TraceRecorder:
    rec = TraceRecorder.start("ask", "goal", directory=tmp_path, redactor=Redactor([SECRET]))
    agent = Agent(ScriptedModel(_calls(n)), ToolRegistry([echo]), rec, Budgets(max_steps=n + 5))
    agent.run([SystemMessage(content="sys"), UserMessage(content="go")])
    return rec


def test_each_step_is_appended_and_earlier_bytes_never_change(tmp_path: Path) -> None:
    rec = TraceRecorder.start("ask", "goal", directory=tmp_path)
    sizes, contents = [], []
    for i in range(5):
        rec.step("tool_result", tool_name="t", result=f"result {i}")
        contents.append(rec.path.read_bytes())
        sizes.append(len(contents[-1]))
    assert sizes == sorted(set(sizes))
    for before, after in itertools.pairwise(contents):
        assert after.startswith(before)  # appended to, never rewritten
    lines = rec.path.read_text().splitlines()
    assert json.loads(lines[0])["trace"] == "repopilot"
    assert [json.loads(line)["step"]["result"] for line in lines[1:]] == [f"result {i}" for i in range(5)]


def test_a_run_reads_back_whole_and_redacted(tmp_path: Path) -> None:
    rec = _run(tmp_path, 3)
    raw = rec.path.read_text()
    assert SECRET not in raw and REDACTED in raw
    trace = load_trace(rec.trace.run_id, tmp_path)
    assert trace.status == "completed" and trace.answer == "done"
    assert [s.type for s in trace.steps].count("tool_result") == 3
    assert trace.totals.tool_calls == 3 and trace.totals.model_calls == 4
    assert len(trace.messages) == len(rec.trace.messages) == 2 + 3 * 2 + 1
    assert all(SECRET not in json.dumps(m) for m in trace.messages)


def test_a_torn_last_line_is_ignored_and_cut_before_the_next_write(tmp_path: Path) -> None:
    rec = _run(tmp_path, 2)
    good = rec.path.read_bytes()
    with rec.path.open("ab") as fh:  # a writer killed half-way through its line
        fh.write(b'{"step": {"step_number": 99, "type": "tool_res')
    assert len(load_trace(rec.trace.run_id, tmp_path).steps) == len(rec.trace.steps)
    again = TraceRecorder.resume(rec.trace.run_id, tmp_path)
    assert again.path.read_bytes() == good
    again.step("decision", result="after the tear")
    reread = load_trace(rec.trace.run_id, tmp_path)
    assert reread.steps[-1].result == "after the tear" and reread.steps[-1].step_number == len(rec.trace.steps) + 1


def test_a_damaged_line_in_the_middle_is_refused(tmp_path: Path) -> None:
    rec = _run(tmp_path, 2)
    lines = rec.path.read_bytes().split(b"\n")
    lines[2] = b"{not json"
    rec.path.write_bytes(b"\n".join(lines))
    with pytest.raises(InputError, match="damaged: line 3"):
        load_trace(rec.trace.run_id, tmp_path)


def test_an_old_single_object_trace_is_read_and_converted_on_resume(tmp_path: Path) -> None:
    rec = _run(tmp_path, 2)
    old = rec.trace.model_dump(mode="json") | {"version": 1}
    rec.path.write_text(json.dumps(old, indent=1))
    trace = load_trace(rec.trace.run_id, tmp_path)
    assert len(trace.steps) == len(rec.trace.steps) and trace.messages == old["messages"]
    again = TraceRecorder.resume(rec.trace.run_id, tmp_path)
    again.step("decision", result="converted")
    assert json.loads(rec.path.read_text().splitlines()[0])["trace"] == "repopilot"
    reread = read_trace(rec.path)
    assert len(reread.steps) == len(rec.trace.steps) + 1 and reread.messages == old["messages"]


def test_elided_messages_are_rewritten_from_where_they_changed(tmp_path: Path) -> None:
    rec = _run(tmp_path, 3)
    rec.trace.messages[3]["content"] = "[elided]"
    rec.messages_changed(3)
    rec.save()
    assert load_trace(rec.trace.run_id, tmp_path).messages == Redactor([SECRET]).value(rec.trace.messages)


def test_no_temporary_file_outlives_a_resume(tmp_path: Path) -> None:
    rec = _run(tmp_path, 1)
    stale = tmp_path / f".{rec.trace.run_id}.abc123.tmp"
    stale.write_text("left by a process killed while converting its trace")
    TraceRecorder.resume(rec.trace.run_id, tmp_path)
    assert not stale.exists()


def test_a_full_disk_stops_the_run_cleanly_and_keeps_the_trace_readable(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    real_write = os.write
    calls = {"n": 0}

    def write(fd: int, data: bytes) -> int:
        # After a few lines, big writes hit a full disk half-way; small ones (the final status) still fit.
        calls["n"] += 1
        if calls["n"] > 4 and len(data) > 600:
            real_write(fd, data[:100])
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(trace_log_mod.os, "write", write)
    rec = TraceRecorder.start("ask", "goal", directory=tmp_path)
    big = [{"tool_calls": [{"name": "echo", "arguments": {"text": "x" * 2000}}]}] * 5 + ["done"]
    agent = Agent(ScriptedModel(big), ToolRegistry([echo]), rec, Budgets(max_steps=10))
    with pytest.raises(ConfigError, match="No space left on device; free some space"):
        agent.run([SystemMessage(content="sys"), UserMessage(content="go")])
    monkeypatch.undo()
    trace = load_trace(rec.trace.run_id, tmp_path)
    assert trace.status == "failed"  # not left `running`: the short status line still fitted


def test_wrong_field_types_in_an_edited_trace_are_a_clear_input_error(tmp_path: Path) -> None:
    rec = _run(tmp_path, 1)
    data = rec.trace.model_dump(mode="json")
    data["messages"][1]["content"] = {"not": "text"}
    rec.path.write_text(json.dumps(data))
    assert load_trace(rec.trace.run_id, tmp_path).run_id == rec.trace.run_id  # readable for `runs show`
    with pytest.raises(InputError, match="not a valid RepoPilot trace"):
        TraceRecorder.resume(rec.trace.run_id, tmp_path)


def test_a_run_written_by_its_recorder_alone_is_not_read_again(tmp_path: Path) -> None:
    rec = TraceRecorder.start("diagnose", "goal", directory=tmp_path)
    rec.step("decision", result="found it")
    rec.finish("completed")
    assert rec.recorded() is rec.trace  # the summary after `diagnose` parses nothing
    other = TraceRecorder.resume(rec.trace.run_id, tmp_path)  # an approval recorded by another recorder
    other.finish("approved")
    seen = rec.recorded()
    assert seen is not rec.trace
    assert (seen.status, len(seen.steps)) == ("approved", 1)
