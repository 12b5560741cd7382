"""Fixtures of the ACP suite: a project folder and ``ink acp`` against the fake model server."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.acp.client import AcpClient
from tests.cli.inkproc import ink_env
from tests.fakeserver import FakeModelServer

StartAcp = Callable[..., AcpClient]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    work = tmp_path / "proj"
    work.mkdir()
    (work / "notes.txt").write_text("the secret is 42\n")
    return work


def acp_args(server: FakeModelServer, protocol: str, *more: str) -> list[str]:
    return ["--provider", protocol, "--base-url", server.base_url(protocol), "--api-key", "k", *more]


@pytest.fixture
def start_acp(fake_server: FakeModelServer, project: Path, tmp_path: Path) -> Iterator[StartAcp]:
    """``start_acp(*flags, protocol="openai")``: a running ``ink acp``; at the end of the test it is
    stopped (end of input, then SIGKILL if it hangs) and its stdout must have held protocol lines only."""
    started: list[AcpClient] = []

    def start(*flags: str, protocol: str = "openai", env: dict[str, str] | None = None) -> AcpClient:
        client = AcpClient.start(acp_args(fake_server, protocol, *flags), env or ink_env(tmp_path), project)
        started.append(client)
        return client

    yield start
    for client in started:
        client.__exit__()
        assert client.violations == [], f"non-protocol lines on stdout: {client.violations[:3]}"


def open_session(ink: AcpClient, cwd: Path) -> str:
    """initialize + session/new; returns the session id."""
    ink.ok("initialize", protocolVersion=1, clientCapabilities={})
    result = ink.ok("session/new", cwd=str(cwd), mcpServers=[])
    session_id = result["sessionId"]
    assert isinstance(session_id, str) and session_id
    return session_id


def text_prompt(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]
