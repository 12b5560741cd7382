"""Thinking levels as each protocol's request fields (``ink.ai.thinking``), and what reaches the wire."""

from __future__ import annotations

import logging

import msgspec
import pytest

from ink.ai.thinking import THINKING_BUDGETS, thinking_options
from tests.ai.helpers import collect, make_request, provider_for
from tests.fakeserver import FakeModelServer


def enabled(budget: int) -> dict[str, object]:
    return {"thinking": {"type": "enabled", "budget_tokens": budget}}


@pytest.mark.parametrize("level", ["low", "medium", "high"])
def test_each_protocol_gets_its_own_fields(level: str) -> None:
    assert thinking_options("openai", level, 32000) == {"reasoning_effort": level}
    assert thinking_options("openai-responses", level, 32000) == {
        "reasoning": {"effort": level, "summary": "auto"}
    }
    budget = THINKING_BUDGETS[level]
    assert thinking_options("anthropic", level, 32000) == {
        "thinking": {"type": "enabled", "budget_tokens": budget}
    }


def test_off_asks_for_nothing() -> None:
    assert all(thinking_options(p, "off", 32000) == {} for p in ("openai", "openai-responses", "anthropic"))


def test_an_anthropic_budget_stays_below_max_tokens_or_thinking_stays_off(
    caplog: pytest.LogCaptureFixture,
) -> None:
    assert thinking_options("anthropic", "high", 8192) == {
        "thinking": {"type": "enabled", "budget_tokens": 8191}
    }
    with caplog.at_level(logging.WARNING):
        assert thinking_options("anthropic", "low", 1024) == {}
    assert "thinking needs max_tokens above 1024 (it is 1024): thinking stays off" in caplog.text


async def test_the_fields_reach_the_request_body(fake_server: FakeModelServer, protocol: str) -> None:
    fake_server.script("thought about it")
    provider = provider_for(protocol, fake_server)
    options = thinking_options(protocol, "low", 4096)
    assert options
    await collect(provider, msgspec.structs.replace(make_request(), options=options, max_tokens=4096))
    await provider.aclose()
    body = fake_server.requests[0].body
    assert {key: body[key] for key in options} == options
