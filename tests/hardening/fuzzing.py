"""The in-process harness of the boundary fuzz suite: one turn of the real app against the strict fake
server, then the session resumed from its file for a second turn.

``turn_then_resume`` builds ink as ``ink -p`` would (``build_app``: real provider over HTTP, real tools,
real session file), submits a prompt, lets the scripted replies play, closes, then builds it again with
``--continue`` and sends one more prompt. The caller's checks then run on what the server received.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

from hypothesis import strategies as st

from ink.ai.messages import message_to_json
from ink.config import Flags, load_settings
from ink.run.events import RunEnd, RunEvent
from ink.store import load_session
from ink.wiring import App, SessionChoice, build_app
from tests.fakeserver import FakeModelServer, Reply, say

RESUMED = "the session reloaded"

# Text as it can reach ink: valid Unicode, undecodable bytes as Python hands them over (surrogate
# escapes), and lone or paired surrogates as a JSON escape produces them.
surrogates = st.lists(st.integers(0xD800, 0xDFFF), min_size=1, max_size=4).map(lambda c: "".join(map(chr, c)))
escaped_bytes = st.binary(min_size=1, max_size=12).map(lambda b: b.decode("utf-8", "surrogateescape"))
hostile_text = st.lists(st.one_of(st.text(max_size=12), surrogates, escaped_bytes), max_size=6).map("".join)


def run_turns(
    server: FakeModelServer, project: Path, home: Path, prompt: str, replies: Sequence[Reply], protocol: str
) -> list[RunEnd]:
    """Both turns (see the module docstring); the ``run_end`` of each. The fake server must have been
    idle: its requests from before are left alone, and those of this call are the last ones."""
    server.script(*replies, say(RESUMED))
    return asyncio.run(_both(server, project, home, prompt, protocol))


async def _both(
    server: FakeModelServer, project: Path, home: Path, prompt: str, protocol: str
) -> list[RunEnd]:
    flags = Flags(
        provider=protocol,
        base_url=server.base_url(protocol),
        api_key="k",
        permission_mode="yolo",
        max_iterations=4,
    )
    settings = load_settings(flags, {"INK_HOME": str(home), "HOME": str(home)}, project)
    ends = [await _turn(build_app(settings), prompt)]
    ends.append(await _turn(build_app(settings, session=SessionChoice(continue_latest=True)), "and then?"))
    return ends


async def _turn(app: App, prompt: str) -> RunEnd:
    events: list[RunEvent] = []
    app.controller.subscribe(events.append)
    try:
        app.controller.submit(prompt)
        await app.controller.wait_idle()
    finally:
        await app.aclose()
    [end] = [e for e in events if isinstance(e, RunEnd)]
    return end


def assert_sendable_and_reloadable(server: FakeModelServer, since: int, home: Path) -> None:
    """Every request since index ``since`` was valid UTF-8 that strict mode accepted; the last one is
    the resumed session's, and every session file loads again."""
    requests = server.requests[since:]
    assert requests, "no request was made"
    for request in requests:
        request.raw_body.decode("utf-8")
        assert request.wait_finished() == "completed", request.error_message
    for path in (home / "sessions").rglob("*.jsonl"):
        for message in load_session(path).messages:
            json.dumps(message_to_json(message), ensure_ascii=False).encode("utf-8")
