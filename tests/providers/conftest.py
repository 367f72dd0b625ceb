from __future__ import annotations

from collections.abc import Iterator

import pytest

from .wire_server import WireServer


@pytest.fixture
def server() -> Iterator[WireServer]:
    srv = WireServer().start()
    try:
        yield srv
    finally:
        srv.stop()
