"""The model catalogue: context window, output limit and prices of common models.

``lookup(name)`` matches a name exactly, else by the longest catalogue name it extends with ``-``
(dated variants and aliases: ``claude-sonnet-4-20250514``, ``gpt-4o-2024-08-06``,
``claude-3-5-haiku-latest``), else after dropping a router's ``vendor/`` prefix (``openai/gpt-4.1``).
An unknown model gets ``UNKNOWN``: a 128k window and no prices, so its cost is *unknown*, never zero.

Prices are US dollars per million tokens, as the vendors publish them. ``Usage.input_tokens`` counts
uncached prompt tokens only; cache reads and writes are counted (and priced) apart.
"""

from __future__ import annotations

import msgspec
from msgspec.structs import replace

from ink.ai.messages import Usage

PER_MILLION = 1_000_000


class ModelInfo(msgspec.Struct, frozen=True):
    """What ink knows about a model. Prices are None when unknown (then ``cost`` is None)."""

    name: str
    context_window: int
    max_output: int
    input_price: float | None = None
    output_price: float | None = None
    cache_read_price: float | None = None
    cache_write_price: float | None = None
    known: bool = True
    images: bool = True  # takes images in a request (a tool's screenshot); unknown models: assumed not


UNKNOWN = ModelInfo("unknown", context_window=128_000, max_output=16_384, known=False, images=False)
TEXT_ONLY = ("o3-mini", "claude-3-5-haiku")


def _openai(name: str, window: int, out: int, inp: float, outp: float, cached: float) -> ModelInfo:
    # OpenAI bills cache writes as ordinary input.
    return ModelInfo(name, window, out, inp, outp, cached, inp)


def _anthropic(name: str, out: int, inp: float, outp: float) -> ModelInfo:
    # Anthropic: 5-minute cache writes cost 1.25x input, cache reads 0.1x input; 200k window.
    return ModelInfo(name, 200_000, out, inp, outp, round(inp * 0.1, 6), round(inp * 1.25, 6))


_CATALOGUE: tuple[ModelInfo, ...] = (
    _openai("gpt-4.1", 1_047_576, 32_768, 2.00, 8.00, 0.50),
    _openai("gpt-4.1-mini", 1_047_576, 32_768, 0.40, 1.60, 0.10),
    _openai("gpt-4.1-nano", 1_047_576, 32_768, 0.10, 0.40, 0.025),
    _openai("gpt-4o", 128_000, 16_384, 2.50, 10.00, 1.25),
    _openai("gpt-4o-mini", 128_000, 16_384, 0.15, 0.60, 0.075),
    _openai("o1", 200_000, 100_000, 15.00, 60.00, 7.50),
    _openai("o3", 200_000, 100_000, 2.00, 8.00, 0.50),
    _openai("o3-mini", 200_000, 100_000, 1.10, 4.40, 0.55),
    _openai("o4-mini", 200_000, 100_000, 1.10, 4.40, 0.275),
    _openai("gpt-5", 400_000, 128_000, 1.25, 10.00, 0.125),
    _openai("gpt-5-mini", 400_000, 128_000, 0.25, 2.00, 0.025),
    _openai("gpt-5-nano", 400_000, 128_000, 0.05, 0.40, 0.005),
    _openai("gpt-5-codex", 400_000, 128_000, 1.25, 10.00, 0.125),
    _openai("gpt-5.1", 400_000, 128_000, 1.25, 10.00, 0.125),
    _openai("gpt-5.1-codex", 400_000, 128_000, 1.25, 10.00, 0.125),
    _openai("gpt-5.1-codex-mini", 400_000, 128_000, 0.25, 2.00, 0.025),
    _anthropic("claude-opus-4", 32_000, 15.00, 75.00),
    _anthropic("claude-opus-4-1", 32_000, 15.00, 75.00),
    _anthropic("claude-opus-4-5", 64_000, 5.00, 25.00),
    _anthropic("claude-sonnet-4", 64_000, 3.00, 15.00),
    _anthropic("claude-sonnet-4-5", 64_000, 3.00, 15.00),
    _anthropic("claude-haiku-4-5", 64_000, 1.00, 5.00),
    _anthropic("claude-3-7-sonnet", 64_000, 3.00, 15.00),
    _anthropic("claude-3-5-sonnet", 8_192, 3.00, 15.00),
    _anthropic("claude-3-5-haiku", 8_192, 0.80, 4.00),
    _anthropic("claude-3-opus", 4_096, 15.00, 75.00),
    _anthropic("claude-3-haiku", 4_096, 0.25, 1.25),
)
_CATALOGUE = tuple(replace(i, images=False) if i.name in TEXT_ONLY else i for i in _CATALOGUE)
_BY_NAME = {info.name: info for info in _CATALOGUE}


def lookup(name: str) -> ModelInfo:
    """The catalogue entry for ``name`` (renamed to ``name``), or ``UNKNOWN`` renamed to it."""
    found = _match(name.strip().lower())
    if found is None and "/" in name:
        found = _match(name.rsplit("/", 1)[1].strip().lower())
    return replace(found or UNKNOWN, name=name)


def _match(name: str) -> ModelInfo | None:
    if name in _BY_NAME:
        return _BY_NAME[name]
    best: ModelInfo | None = None
    for info in _CATALOGUE:
        if name.startswith(info.name + "-") and (best is None or len(info.name) > len(best.name)):
            best = info
    return best


def priced(usage: Usage, model: str | ModelInfo) -> Usage:
    """``usage`` with its ``cost_usd``: the one place ink prices a model call. A call that used no
    tokens costs 0 even for a model without known prices; one whose counts the server never reported
    (``accuracy="missing"``) has an unknown price."""
    if usage.accuracy == "missing":
        return replace(usage, cost_usd=None)
    return replace(usage, cost_usd=cost(usage, model) if usage.counts else 0.0)


def cost(usage: Usage, model: str | ModelInfo) -> float | None:
    """The price of ``usage`` in US dollars, or None when the model's prices are unknown."""
    info = lookup(model) if isinstance(model, str) else model
    prices = (info.input_price, info.output_price, info.cache_read_price, info.cache_write_price)
    if any(p is None for p in prices):
        return None
    inp, outp, read, write = (p or 0.0 for p in prices)
    total = (
        usage.input_tokens * inp
        + usage.output_tokens * outp
        + usage.cache_read_tokens * read
        + usage.cache_write_tokens * write
    )
    return total / PER_MILLION
