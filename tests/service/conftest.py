"""The service's tests run against a real PostgreSQL started for the session (tests/fixtures/servers.py) and a
loopback fake of the GitHub API. Without the `service` extra or the PostgreSQL binaries they skip."""

from __future__ import annotations

import itertools
import json
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("procrastinate")
pytest.importorskip("starlette")
pytest.importorskip("jwt")

import psycopg
from starlette.testclient import TestClient

from repopilot.app import ServiceSettings, load_settings
from repopilot.ci import github_api
from repopilot.core import use_quota_gate
from repopilot.service import prepare_database, sign, work
from repopilot.service.web import create_app
from tests.fixtures.github.fake_app import FakeGitHubApp, new_private_key, start
from tests.fixtures.servers import Postgres, find_pg_bin, remove, start_postgres

SECRET = "It's a Secret to Everybody"
_numbers = itertools.count(1)


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    if find_pg_bin() is None:
        pytest.skip("PostgreSQL is not installed (apt-get install postgresql; .ci/run does)")
    server = start_postgres()
    yield server
    remove(server)


@pytest.fixture(scope="session")
def private_key() -> str:
    return new_private_key()


@pytest.fixture
def database(postgres: Postgres) -> str:
    """A fresh database for each test."""
    name = f"t{next(_numbers)}_{uuid.uuid4().hex[:6]}"
    with psycopg.connect(postgres.url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return postgres.url.replace("/postgres?", f"/{name}?")


@dataclass
class Service:
    settings: ServiceSettings
    github: FakeGitHubApp
    client: TestClient

    def deliver(self, event: str, payload: dict[str, Any], delivery: str | None = None,
                signature: str | None = None) -> Any:
        body = json.dumps(payload).encode()
        headers = {"X-GitHub-Event": event, "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
                   "X-Hub-Signature-256": signature if signature is not None else sign(SECRET, body),
                   "Content-Type": "application/json"}
        return self.client.post("/webhook", content=body, headers=headers)

    def work(self) -> None:
        """Run the worker until the queues are empty."""
        work(self.settings, name="test-worker", wait=False, heartbeat=1.0, stalled_after=5.0)

    def sql(self, query: str, *args: Any) -> list[tuple[Any, ...]]:
        with psycopg.connect(self.settings.database_url, autocommit=True) as conn:
            cursor = conn.execute(query, args)
            return list(cursor.fetchall()) if cursor.description else []


@pytest.fixture
def service(database: str, private_key: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Service]:
    fake = FakeGitHubApp(private_key=private_key)
    server = start(fake)
    monkeypatch.setattr(github_api, "_sleep", lambda s: None)  # the client's own backoff, not waited in tests
    base = load_settings(os.environ)
    settings = ServiceSettings(base=base, database_url=database, webhook_secret=SECRET, app_id=fake.app_id,
                               private_key=private_key, api_url=fake.url, workdir=tmp_path / "work")
    prepare_database(database)
    with TestClient(create_app(settings)) as client:
        yield Service(settings, fake, client)
    use_quota_gate(None)  # the worker's gate, installed by `work`, does not outlive the test
    server.shutdown()
    server.server_close()
