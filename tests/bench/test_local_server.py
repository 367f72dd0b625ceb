"""bench/local_server.py repairs llama-cpp-python's chatml-function-calling format for the live runs: tool results
must reach the model (the stock template drops them) and every completion is capped. Tested without llama.cpp."""

import importlib.util
import sys
import types
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _server_module() -> Any:
    spec = importlib.util.spec_from_file_location("local_server", ROOT / "bench" / "local_server.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_tool_results_become_user_turns_naming_their_tool_and_descriptions_are_listed() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
    tools = [{"type": "function", "function": {"name": "read_file", "description": "Read a file.", "parameters": {}}}]
    shown = _server_module()._shown([
        {"role": "system", "content": "Fix it."}, {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "def add(a, b): ..."},
    ], tools)
    assert shown[0]["content"] == "Fix it.\n\nWhat each function does:\n- read_file: Read a file."
    assert shown[2]["tool_calls"] == [call]
    assert shown[3] == {"role": "user", "content": "Result of read_file:\ndef add(a, b): ..."}


def test_every_completion_is_capped_unless_the_request_asks_for_less(monkeypatch: Any) -> None:
    asked: list[Any] = []

    class Llama:
        def create_completion(self, prompt: str, **kwargs: Any) -> None:
            asked.append(kwargs.get("max_tokens"))

    monkeypatch.setitem(sys.modules, "llama_cpp", types.SimpleNamespace(Llama=Llama))
    _server_module()._cap(100)
    for wanted in (None, 0, 500, 40):
        Llama().create_completion("p", max_tokens=wanted)
    assert asked == [100, 100, 100, 40]


def test_the_forced_arm_names_the_tool_only_when_offered_and_late_enough() -> None:
    forced = _server_module()._forced
    tools = [{"type": "function", "function": {"name": "propose_fix"}}]
    two_turns = [{"role": "assistant", "content": "a"}, {"role": "user", "content": "b"},
                 {"role": "assistant", "content": "c"}]
    assert forced("auto", two_turns, tools, "propose_fix", 2) == {"type": "function",
                                                                 "function": {"name": "propose_fix"}}
    assert forced("auto", two_turns[:1], tools, "propose_fix", 2) == "auto"
    assert forced("auto", two_turns, [], "propose_fix", 2) == "auto"
    assert forced("auto", two_turns, tools, None, 0) == "auto"


def test_the_forced_edit_grammar_requires_exactly_the_edit_fields_of_that_tool() -> None:
    narrowed = _server_module()._narrowed
    tools = [{"type": "function", "function": {"name": "propose_fix", "parameters": {
        "properties": {"diff": {"type": "string"}, "path": {"anyOf": [{"type": "string"}, {"type": "null"}],
                                                             "description": "The file."}}}}},
             {"type": "function", "function": {"name": "read_file", "parameters": {"properties": {}}}}]
    out = narrowed(tools, "propose_fix", ["path"])
    assert out[0]["function"]["parameters"] == {"type": "object", "required": ["path"], "additionalProperties": False,
                                                "properties": {"path": {"type": "string", "description": "The file."}}}
    assert out[1] == tools[1] and narrowed(tools, "propose_fix", []) == tools


def test_the_live_test_and_the_benchmarks_start_this_wrapper_on_loopback() -> None:
    """tests/providers/test_live_llama.py and bench/live_fix_local.py both go through `launch`, which runs this
    file (not the stock `python -m llama_cpp.server`) with the repaired chat format."""
    server = _server_module()
    argv = server.command(Path("m.gguf"), 8123, "--n_threads", "2")
    assert argv[:2] == [sys.executable, str(ROOT / "bench" / "local_server.py")]
    assert argv[2:] == ["--model", "m.gguf", "--chat_format", "chatml-function-calling", "--host", "127.0.0.1",
                        "--port", "8123", "--n_threads", "2"]
    for path in (ROOT / "tests" / "providers" / "test_live_llama.py", ROOT / "bench" / "live_fix_local.py"):
        text = path.read_text()
        assert "launch(" in text and "llama_cpp.server" not in text, path


def test_a_server_that_cannot_start_says_why(tmp_path: Path) -> None:
    # Without llama-cpp-python (as in CI) the wrapper exits at once: launch says so, with the server's output.
    if importlib.util.find_spec("llama_cpp") is not None:
        pytest.skip("llama-cpp-python is installed here: the server would start")
    try:
        _server_module().launch(tmp_path / "m.gguf", tmp_path / "server.log", timeout=60)
    except RuntimeError as exc:
        assert "the server exited" in str(exc) and "llama_cpp" in str(exc)
    else:
        raise AssertionError("launch returned without a server")
