"""A Ray head of one's own for tests and the batch benchmark: ``ray start --head --block``, ended with its
whole process tree (never ``ray stop``, which would end every Ray instance on the machine)."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psutil

RAY = str(Path(sys.executable).parent / "ray")
NO_AUTH = {"RAY_AUTH_MODE": "disabled"}
"""A head on loopback for one test needs no token; with one, every client would need ``~/.ray/auth_token``
of the HOME that started it, and tests run ink with a HOME of their own."""
STALE_TOKEN = "a-token-another-cluster-left-behind"
"""Put in the head's own home: Ray turns token auth on for ``ray start`` when ``~/.ray/auth_token`` exists
and ``RAY_AUTH_MODE`` is unset, so a token left by any earlier cluster on the machine made both Ray tests
fail (InvalidAuthToken). The head gets a home of its own holding such a file, and the mode set: the tests
pass whatever the machine's home holds."""


def head_env(temp: str) -> dict[str, str]:
    """The environment of a head: the test's, without Ray's own settings, with a home of its own."""
    home = Path(temp) / "home"
    (home / ".ray").mkdir(parents=True)
    (home / ".ray" / "auth_token").write_text(STALE_TOKEN)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    return env | NO_AUTH | {"HOME": str(home)}


@contextlib.contextmanager
def ray_head(cpus: int = 4) -> Iterator[str]:
    """Start a head with ``cpus`` CPUs; yields its address (``127.0.0.1:PORT``)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    temp = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # short: Ray's unix sockets live under it
    start = [
        RAY,
        "start",
        "--head",
        "--block",
        f"--port={port}",
        f"--num-cpus={cpus}",
        "--include-dashboard=false",
        "--disable-usage-stats",
        f"--temp-dir={temp}",
    ]
    head = subprocess.Popen(
        start,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        env=head_env(temp),
    )
    try:
        assert head.stdout is not None
        for line in head.stdout:  # the head says when it is up
            if "Ray runtime started" in line:
                break
        else:
            raise RuntimeError("ray start --head ended before the runtime started")
        yield f"127.0.0.1:{port}"
    finally:
        tree = psutil.Process(head.pid).children(recursive=True) if head.poll() is None else []
        tree += [p for p in psutil.process_iter(["cmdline"]) if temp in " ".join(p.info["cmdline"] or [])]
        head.terminate()
        head.wait(timeout=60)
        for proc in tree:
            with contextlib.suppress(psutil.Error):
                proc.kill()
        shutil.rmtree(temp, ignore_errors=True)
