from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .wire_server import WireServer


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Live tests start a real model server: they run only when asked for with `-m live`."""
    if "live" in (config.getoption("markexpr", "") or ""):
        return
    skip = pytest.mark.skip(reason="live test: run with `pytest -m live` (see bench/live_local_model.sh)")
    here = Path(__file__).parent
    for item in items:
        if item.get_closest_marker("live") is not None and item.path.is_relative_to(here):
            item.add_marker(skip)


@pytest.fixture
def server() -> Iterator[WireServer]:
    srv = WireServer().start()
    try:
        yield srv
    finally:
        srv.stop()
