"""The model catalogue: matching names, a safe default, and costs that are unknown rather than zero."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from ink.ai.messages import Usage
from ink.ai.models import UNKNOWN, cost, lookup


@pytest.mark.parametrize(
    ("name", "entry", "window"),
    [
        ("gpt-4.1", "gpt-4.1", 1_047_576),
        ("gpt-4.1-mini-2025-04-14", "gpt-4.1-mini", 1_047_576),
        ("gpt-4o-2024-08-06", "gpt-4o", 128_000),
        ("gpt-4o-mini", "gpt-4o-mini", 128_000),  # not gpt-4o: the longest match wins
        ("o4-mini-2025-04-16", "o4-mini", 200_000),
        ("gpt-5-mini", "gpt-5-mini", 400_000),
        ("claude-sonnet-4-20250514", "claude-sonnet-4", 200_000),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5", 200_000),
        ("claude-opus-4-1-20250805", "claude-opus-4-1", 200_000),
        ("claude-3-5-haiku-latest", "claude-3-5-haiku", 200_000),
        ("openai/GPT-4o", "gpt-4o", 128_000),  # a router's vendor prefix, any case
    ],
)
def test_names_match_exactly_or_as_dated_variants(name: str, entry: str, window: int) -> None:
    info = lookup(name)
    assert info.known and info.context_window == window and info.name == name
    assert info == replace(lookup(entry), name=name)


@pytest.mark.parametrize("name", ["llama3:8b", "gpt-4", "gpt-4.1x", "claude", "fake-model", ""])
def test_unknown_models_get_a_safe_window_and_no_prices(name: str) -> None:
    info = lookup(name)
    assert not info.known and info.context_window == UNKNOWN.context_window == 128_000
    assert cost(Usage(1000, 1000), name) is None  # unknown, not free


def test_costs_count_every_kind_of_token_at_its_price() -> None:
    usage = Usage(
        input_tokens=1_000_000, output_tokens=100_000, cache_read_tokens=2_000_000, cache_write_tokens=0
    )
    assert cost(usage, "gpt-4.1") == pytest.approx(2.00 + 0.80 + 1.00)
    anthropic = Usage(
        input_tokens=10_000, output_tokens=1_000, cache_read_tokens=100_000, cache_write_tokens=20_000
    )
    # sonnet 4.5: $3 in, $15 out, $0.30 cache read, $3.75 cache write per million
    assert cost(anthropic, "claude-sonnet-4-5-20250929") == pytest.approx(0.03 + 0.015 + 0.03 + 0.075)
    assert cost(Usage(), "gpt-4o") == 0.0
    assert cost(usage, lookup("gpt-4.1")) == cost(usage, "gpt-4.1")
