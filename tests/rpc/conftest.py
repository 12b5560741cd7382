"""Fixtures of the RPC protocol suite: a project folder and ``ink --mode rpc`` against the fake server."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.cli.inkproc import ink_env
from tests.fakeserver import FakeModelServer
from tests.rpc.client import RpcClient

StartRpc = Callable[..., RpcClient]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    work = tmp_path / "proj"
    work.mkdir()
    (work / "notes.txt").write_text("the secret is 42\n")
    return work


def rpc_args(server: FakeModelServer, protocol: str, *more: str) -> list[str]:
    return ["--provider", protocol, "--base-url", server.base_url(protocol), "--api-key", "k", *more]


@pytest.fixture
def start_rpc(fake_server: FakeModelServer, project: Path, tmp_path: Path) -> Iterator[StartRpc]:
    """``start_rpc(*flags, protocol="openai")``: a running ``ink --mode rpc``; at the end of the test it
    is stopped (end of input, then SIGKILL if it hangs) and its stdout must have held protocol lines only."""
    started: list[RpcClient] = []

    def start(*flags: str, protocol: str = "openai", env: dict[str, str] | None = None) -> RpcClient:
        client = RpcClient.start(rpc_args(fake_server, protocol, *flags), env or ink_env(tmp_path), project)
        started.append(client)
        return client

    yield start
    for client in started:
        client.__exit__()
        assert client.violations == [], f"non-protocol lines on stdout: {client.violations[:3]}"
