"""Fixtures of the ACP suite: ``ink acp`` against the fake model server, in the root conftest's ``project``
folder."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.acp.client import AcpClient
from tests.fakeserver import FakeModelServer
from tests.jsonl_client import started_clients

StartAcp = Callable[..., AcpClient]


@pytest.fixture
def start_acp(fake_server: FakeModelServer, project: Path, tmp_path: Path) -> Iterator[StartAcp]:
    """``start_acp(*flags, protocol="openai", env=None)``: a running ``ink acp``; at the end of the test it
    is stopped (end of input, then SIGKILL if it hangs) and its stdout must have held protocol lines only."""
    yield from started_clients(AcpClient, fake_server, project, tmp_path)


def open_session(ink: AcpClient, cwd: Path) -> str:
    """initialize + session/new; returns the session id."""
    ink.ok("initialize", protocolVersion=1, clientCapabilities={})
    result = ink.ok("session/new", cwd=str(cwd), mcpServers=[])
    session_id = result["sessionId"]
    assert isinstance(session_id, str) and session_id
    return session_id


def text_prompt(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]
