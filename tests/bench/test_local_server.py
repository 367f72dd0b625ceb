"""bench/local_server.py repairs llama-cpp-python's chatml-function-calling format for the live runs: tool results
must reach the model (the stock template drops them) and every completion is capped. Tested without llama.cpp."""

import importlib.util
import sys
import types
from pathlib import Path
from typing import Any

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
