"""Fixtures the ci tests share."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from repopilot.ci import native


@pytest.fixture
def python_forms() -> Iterator[None]:
    """The pure-Python forms of the C extension's functions, for the test's duration."""
    was = native.use(False)
    try:
        yield
    finally:
        native.use(was)
