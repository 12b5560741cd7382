"""``ink -p`` against a server whose error answer holds terminal escapes (issue 29, "HTTP client"): the
one error line on stderr shows them escaped, never raw, so the server cannot retitle or clear the
user's terminal, or write a line that looks like ink's own."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.ai.wire_peers import Received, ScriptedServer, served_in_a_thread
from tests.cli.inkproc import ink_env, one_line_error, run_ink


async def hostile(request: Received, writer: asyncio.StreamWriter) -> bool:
    body = b"\x1b[2J\x1b[Hink: all good\nmore \xc2\x9b31mred\x07"  # U+009B (CSI) in UTF-8
    head = b"HTTP/1.1 401 \x1b]0;owned\x07Unauthorized\r\ncontent-length: %d\r\n\r\n" % len(body)
    writer.write(head + body)
    await writer.drain()
    return False


def test_an_error_line_from_the_server_reaches_stderr_escaped(project: Path, tmp_path: Path) -> None:
    with served_in_a_thread(ScriptedServer(hostile)) as server:
        base = f"http://127.0.0.1:{server.port}/v1"
        args = ["-p", "--no-session", "--provider", "openai", "--base-url", base, "--api-key", "k", "hi"]
        done = run_ink(args, ink_env(tmp_path), project, timeout=60)
    assert done.returncode == 1, done.stderr
    line = one_line_error(done.stderr)  # the body's line break did not start a second line
    assert not any(char in done.stderr for char in "\x1b\x07\x9b\r"), repr(done.stderr)
    assert "\\x1b[2J\\x1b[Hink: all good\\nmore \\x9b31mred\\x07" in line
    assert len(server.requests) == 1, "a 401 is not asked again"
