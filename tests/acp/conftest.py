"""Fixtures of the ACP suite: ``ink acp`` against the fake model server, in the root conftest's ``project``
folder."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.acp.client import AcpClient
from tests.fakeserver import FakeModelServer, Gate, Reply, text
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


def held_prompt(
    start_acp: StartAcp, server: FakeModelServer, cwd: Path, prompt: str, *then: Reply | str
) -> tuple[AcpClient, str, Any, Gate]:
    """A session whose first prompt is in flight, its model reply held at the start (``then``: the
    replies scripted after it). Returns the client, the session id, the prompt's request id and the
    gate holding the reply (open it to let the fake server's thread go)."""
    gate = Gate()
    server.script(Reply([gate, text("never shown")]), *then)
    ink = start_acp()
    session = open_session(ink, cwd)
    request = ink.send("session/prompt", sessionId=session, prompt=text_prompt(prompt))
    gate.wait_reached()
    return ink, session, request, gate
