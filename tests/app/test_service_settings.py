"""The service's settings: read from the environment once, secrets never shown, missing ones named."""

from __future__ import annotations

from pathlib import Path

import pytest

from repopilot.app import Settings, load_service_settings
from repopilot.core import ConfigError

BASE = Settings(github_api_url="http://127.0.0.1:9/")


def test_everything_from_the_environment(tmp_path: Path) -> None:
    key = tmp_path / "app.pem"
    key.write_text("-----BEGIN PRIVATE KEY-----\nsecret\n-----END PRIVATE KEY-----\n")
    s = load_service_settings({"REPOPILOT_DATABASE_URL": "postgresql://u@db/rp", "REPOPILOT_WEBHOOK_SECRET": "w",
                               "REPOPILOT_APP_ID": "12", "REPOPILOT_APP_PRIVATE_KEY_FILE": str(key),
                               "REPOPILOT_MODEL_CONCURRENCY": "3"}, BASE)
    assert (s.database_url, s.app_id, s.model_concurrency, s.api_url) == ("postgresql://u@db/rp", "12", 3,
                                                                          "http://127.0.0.1:9")
    assert s.private_key is not None and "secret" in s.private_key
    assert "secret" not in repr(s) and "'w'" not in repr(s)


@pytest.mark.parametrize(("env", "names"), [
    ({}, "REPOPILOT_DATABASE_URL"),
    ({"REPOPILOT_DATABASE_URL": "postgresql://x"}, "REPOPILOT_WEBHOOK_SECRET"),
    ({"REPOPILOT_DATABASE_URL": "postgresql://x", "REPOPILOT_WEBHOOK_SECRET": "w"}, "REPOPILOT_APP_ID"),
    ({"REPOPILOT_DATABASE_URL": "postgresql://x", "REPOPILOT_WEBHOOK_SECRET": "w", "REPOPILOT_APP_ID": "1",
      "REPOPILOT_APP_PRIVATE_KEY_FILE": "/nonexistent/key.pem"}, "REPOPILOT_APP_PRIVATE_KEY_FILE"),
    ({"REPOPILOT_DATABASE_URL": "postgresql://x", "REPOPILOT_WEBHOOK_SECRET": "w",
      "REPOPILOT_MODEL_CONCURRENCY": "many"}, "REPOPILOT_MODEL_CONCURRENCY"),
])
def test_a_missing_or_bad_value_is_named(env: dict[str, str], names: str) -> None:
    with pytest.raises(ConfigError, match=names):
        load_service_settings(env, BASE, need_app="REPOPILOT_MODEL_CONCURRENCY" not in names)
