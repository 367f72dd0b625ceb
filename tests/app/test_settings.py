"""Settings: flags over environment over the project's config over the user's config over defaults, each value
remembering where it came from; `repopilot config` shows them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repopilot.app import load_settings
from repopilot.cli.main import main
from repopilot.core import DEFAULT_MAX_STEPS, ConfigError
from tests.ci.test_matchers import TSC

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ci"


def _user_config(tmp_path: Path, text: str) -> dict[str, str]:
    path = tmp_path / "xdg" / "repopilot" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    return {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}


def test_precedence_and_origins(tmp_path: Path) -> None:
    env = _user_config(tmp_path, 'token_budget = 700\nmax_steps = 5\nmodel = "scripted:user"\n')
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text('[tool.repopilot]\nmax_steps = 7\nmodel = "scripted:project"\n')
    s = load_settings({**env, "REPOPILOT_MODEL": "scripted:env"}, project, token_budget=None, max_steps=9)
    assert (s.token_budget, s.max_steps, s.model) == (700, 9, "scripted:env")
    assert s.origins["token_budget"] == f"config {tmp_path / 'xdg' / 'repopilot' / 'config.toml'}"
    assert s.origins["max_steps"] == "flag --max-steps" and s.origins["model"] == "env REPOPILOT_MODEL"
    assert load_settings(env, project).origins["model"].endswith("pyproject.toml [tool.repopilot]")
    defaults = load_settings({}, tmp_path / "nowhere")
    assert defaults.max_steps == DEFAULT_MAX_STEPS and "max_steps" not in defaults.origins


def test_repopilot_toml_wins_over_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.repopilot]\ntoken_budget = 300\n")
    (tmp_path / "repopilot.toml").write_text("token_budget = 400\n")
    assert load_settings({}, tmp_path).token_budget == 400


@pytest.mark.parametrize(("text", "message"), [
    ("github_token = 'x'\n", "unknown setting 'github_token'"),
    ("max_steps = 'many'\n", "max_steps"),
    ("max_steps = \n", "not valid TOML"),
])
def test_bad_config_is_a_config_error(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "repopilot.toml").write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_settings({}, tmp_path)


def test_bad_config_file_exits_2_with_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "repopilot.toml").write_text("colour = 'blue'\n")
    monkeypatch.chdir(tmp_path)
    assert main(["diagnose", str(FIXTURES / "go-mod-fail.log")]) == 2
    err = capsys.readouterr().err
    assert "unknown setting 'colour'" in err and len(err.strip().splitlines()) == 1


def test_config_command_shows_values_and_origins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "repopilot.toml").write_text("token_budget = 800\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_" + "s" * 36)
    assert main(["config", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["token_budget"] == {"value": "800", "from": f"config {tmp_path / 'repopilot.toml'}"}
    assert shown["runs_dir"]["from"] == "env REPOPILOT_RUNS_DIR"
    assert shown["github_token"]["value"] == "set"
    assert main(["config"]) == 0
    out = capsys.readouterr().out
    assert "token_budget" in out and "ghp_" not in out


def test_a_config_file_reaches_the_diagnosis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    # A setting read at the edge and passed down: the excerpt's budget from the project's config file.
    (tmp_path / "repopilot.toml").write_text("token_budget = 150\n")
    monkeypatch.chdir(tmp_path)
    assert main(["diagnose", str(FIXTURES / "maven-compile-error.log"), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["excerpt"]["tokens"] <= 150


def test_user_rules_reach_the_scanner_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "tsc.json").write_text(json.dumps(TSC))
    log = tmp_path / "x.log"
    log.write_text("> tsc -p .\nsrc/app.ts(12,5): warning TS6133: 'x' is declared but never used.\n")
    monkeypatch.setenv("REPOPILOT_RULES", str(rules))
    assert main(["diagnose", str(log), "--format", "json"]) == 0, capsys.readouterr().err
    assert json.loads(capsys.readouterr().out)["failures"][0]["rule"] == "matcher.tsc"


def test_a_pyproject_without_repopilot_is_not_parsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tomllib

    def refuse(*args: object) -> None:
        raise AssertionError("parsed")

    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n[tool.ruff\nbroken = ')
    monkeypatch.setattr(tomllib, "load", refuse)
    assert "max_steps" not in load_settings({}, tmp_path).origins  # neither parsed nor refused: not RepoPilot's
    monkeypatch.undo()
    for table in ("[tool.repopilot]", '[tool."repopilot"]', '[tool."\\u0072epopilot"]'):
        (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "x"\n{table}\nmax_steps = 7\n')
        assert load_settings({}, tmp_path).max_steps == 7
