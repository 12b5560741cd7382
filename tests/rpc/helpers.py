"""Shared helpers of the RPC suite: held replies, and ink held in the middle of a run."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.fakeserver import Gate, Reply, text

if TYPE_CHECKING:
    from tests.fakeserver import FakeModelServer
    from tests.rpc.client import RpcClient
    from tests.rpc.conftest import StartRpc


def held(*steps: object) -> tuple[Gate, Reply]:
    """A reply that waits at a gate before its steps."""
    gate = Gate()
    return gate, Reply([gate, *steps])  # type: ignore[list-item]


def mid_run(
    fake_server: FakeModelServer, start_rpc: StartRpc, *later: Reply, prompt: str = "go"
) -> tuple[RpcClient, Gate]:
    """ink started, running ``prompt``, its first reply held at the gate (``later`` replies come next)."""
    gate, reply = held(text("never"))
    fake_server.script(reply, *later)
    ink = start_rpc()
    ink.ok("prompt", text=prompt)
    gate.wait_reached()
    return ink, gate
