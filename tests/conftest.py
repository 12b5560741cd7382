"""Shared test set-up. The fake model server itself lives in tests/fakeserver."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakeserver import FakeModelServer


@pytest.fixture
def fake_server() -> Iterator[FakeModelServer]:
    """A started fake model server (strict mode on), stopped after the test."""
    with FakeModelServer() as server:
        yield server


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The working folder of the ink under test (``tmp_path/proj``), holding ``notes.txt``. Suites that
    need another one define their own."""
    work = tmp_path / "proj"
    work.mkdir()
    (work / "notes.txt").write_text("the secret is 42\n")
    return work


@pytest.fixture
def marks(tmp_path: Path) -> Path:
    """A folder outside the project where a test's command leaves its marks (``started``, a pid): not
    ``tmp_path`` itself, which holds the test's INK_HOME, and the sandbox lets no file be made directly
    in a folder holding a secret one (R41, docs/security.md)."""
    folder = tmp_path / "marks"
    folder.mkdir()
    return folder
