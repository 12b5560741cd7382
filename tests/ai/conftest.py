from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from ink.ai.anthropic import AnthropicProvider
from ink.ai.openai import OpenAIProvider
from tests.ai.helpers import PROTOCOLS, provider_for
from tests.fakeserver import FakeModelServer


@pytest.fixture(params=PROTOCOLS)
def protocol(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def provider(
    protocol: str, fake_server: FakeModelServer
) -> AsyncIterator[OpenAIProvider | AnthropicProvider]:
    """A provider of each protocol against the fake server, with fast retries; closed after the test."""
    p = provider_for(protocol, fake_server)
    yield p
    await p.aclose()
