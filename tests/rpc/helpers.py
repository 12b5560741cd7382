"""Shared helpers of the RPC suite: held replies."""

from __future__ import annotations

from tests.fakeserver import Gate, Reply


def held(*steps: object) -> tuple[Gate, Reply]:
    """A reply that waits at a gate before its steps."""
    gate = Gate()
    return gate, Reply([gate, *steps])  # type: ignore[list-item]
