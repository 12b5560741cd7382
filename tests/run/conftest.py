"""The model of the rule suites: the in-memory scripted provider (no HTTP)."""

from __future__ import annotations

import pytest

from tests.scripted_provider import ScriptedProvider


@pytest.fixture
def model() -> ScriptedProvider:
    """A scripted model speaking OpenAI Chat Completions' history rules; tests queue its replies."""
    return ScriptedProvider()
