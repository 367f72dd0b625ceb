"""`repopilot models`: providers, the configured one, endpoints, keys set or not and never shown."""

from __future__ import annotations

import json

import pytest

from repopilot.cli.main import main

SECRET = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123"


def test_lists_providers_marks_the_configured_one_and_hides_keys(monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("REPOPILOT_MODEL", "anthropic:claude-3-5-haiku-latest")
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setenv("OLLAMA_HOST", "http://admin:hunter2hunter2@127.0.0.1:11500")
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    lines = {line.split()[1] if line.startswith("*") else line.split()[0]: line for line in out.splitlines()[1:]
             if line.strip() and not line.startswith("model:")}
    assert set(lines) == {"anthropic", "gemini", "ollama", "openai", "scripted"}
    assert lines["anthropic"].startswith("*") and "ANTHROPIC_API_KEY set" in lines["anthropic"]
    assert "https://api.anthropic.com" in lines["anthropic"]
    assert "GEMINI_API_KEY not set" in lines["gemini"]
    assert "http://127.0.0.1:11500" in lines["ollama"] and "OLLAMA_HOST" in lines["ollama"]
    assert "https://api.openai.com/v1" in lines["openai"]
    assert "model: anthropic:claude-3-5-haiku-latest" in out
    assert SECRET not in out and SECRET[:12] not in out and "hunter2" not in out


def test_json_and_a_bad_model_setting(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("REPOPILOT_MODEL", "mistral:large")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")
    assert main(["models", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["configured"]["problem"] == "unknown provider 'mistral'"
    openai = next(p for p in data["providers"] if p["provider"] == "openai")
    assert openai == {"provider": "openai", "configured": False, "endpoint": "http://127.0.0.1:8080/v1",
                      "endpoint_var": "OPENAI_BASE_URL", "endpoint_from": "env", "key_var": "OPENAI_API_KEY",
                      "key": "not set"}


def test_nothing_configured(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models"]) == 0
    assert "REPOPILOT_MODEL is not set" in capsys.readouterr().out
