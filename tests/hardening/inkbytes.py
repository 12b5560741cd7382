"""Running ``ink -p`` with arbitrary bytes: in its arguments, on its stdin, in its working folder."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.cli.inkproc import INK
from tests.fakeserver import FakeModelServer


def print_args(server: FakeModelServer, protocol: str = "openai", *more: str) -> list[str]:
    base = server.base_url(protocol)
    flags = ["--provider", protocol, "--base-url", base, "--api-key", "k", "--permission-mode", "yolo"]
    return ["-p", *flags, *more]


def run_bytes(
    args: list[str | bytes], env: dict[str, str], cwd: Path, stdin: bytes = b"", timeout: float = 60
) -> subprocess.CompletedProcess[bytes]:
    """``ink`` with ``args`` passed as they are (bytes stay bytes: what a shell hands over)."""
    return subprocess.run([*INK, *args], env=env, cwd=cwd, input=stdin, capture_output=True, timeout=timeout)


def assert_all_accepted(server: FakeModelServer, count: int) -> None:
    """The server saw ``count`` requests, each a valid UTF-8 body that strict mode accepted."""
    assert len(server.requests) == count, [r.error_message for r in server.requests]
    for request in server.requests:
        request.raw_body.decode("utf-8")
        assert request.wait_finished() == "completed", request.error_message
