"""Shared test set-up. The fake model server itself lives in tests/fakeserver."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakeserver import FakeModelServer


@pytest.fixture
def fake_server() -> Iterator[FakeModelServer]:
    """A started fake model server (strict mode on), stopped after the test."""
    with FakeModelServer() as server:
        yield server
