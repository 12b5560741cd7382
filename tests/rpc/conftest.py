"""Fixtures of the RPC protocol suite: ``ink --mode rpc`` against the fake server, in the root conftest's
``project`` folder."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.fakeserver import FakeModelServer
from tests.jsonl_client import started_clients
from tests.rpc.client import RpcClient

StartRpc = Callable[..., RpcClient]


@pytest.fixture
def start_rpc(fake_server: FakeModelServer, project: Path, tmp_path: Path) -> Iterator[StartRpc]:
    """``start_rpc(*flags, protocol="openai", env=None)``: a running ``ink --mode rpc``; at the end of the
    test it is stopped (end of input, then SIGKILL if it hangs) and its stdout must have held protocol
    lines only."""
    yield from started_clients(RpcClient, fake_server, project, tmp_path)
