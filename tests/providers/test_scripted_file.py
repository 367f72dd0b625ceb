import json
from pathlib import Path

import pytest

from repopilot.cli.main import main
from repopilot.core import ConfigError, read_trace
from repopilot.providers import resolve_model


def test_replays_a_json_script_through_ask(git_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([
        {"content": "Looking.", "tool_calls": [{"name": "read_file", "arguments": {"path": "src/calc.py"}}]},
        "add() subtracts: src/calc.py line 2.",
    ]))
    monkeypatch.setenv("REPOPILOT_MODEL", f"scripted:{script}")
    assert main(["ask", "why does test_add fail?", "--repo", str(git_repo), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["answer"] == "add() subtracts: src/calc.py line 2."
    trace = read_trace(Path(payload["trace"])).model_dump(mode="json")
    result = next(s for s in trace["steps"] if s["type"] == "tool_result")
    assert "return a - b" in result["result"]


@pytest.mark.parametrize("content,needle", [
    (None, "does not exist"),
    ("{not json", "cannot read the model script"),
    ('{"replies": [{"tool_calls": [{"arguments": {}}]}]}', "a model script is a JSON list"),
    ('[{"text": "hi"}]', "a model script is a JSON list"),
])
def test_bad_scripts_are_config_errors(tmp_path: Path, content: str | None, needle: str) -> None:
    path = tmp_path / "s.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ConfigError, match=needle):
        resolve_model(f"scripted:{path}", {})


def test_unknown_scripted_name() -> None:
    with pytest.raises(ConfigError, match=r"scripted:demo or scripted:PATH\.json"):
        resolve_model("scripted:nonsense", {})
