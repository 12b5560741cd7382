"""abort -> ``run_end`` through ``ink --mode rpc`` while a ``bash`` tool runs (issue 16: <= 10 ms).

The fake server (in this process) asks for ``bash`` with ``touch started; sleep 100 & sleep 100``; once
the marker file exists the command runs, the ``abort`` line is written and the time until the
``run_end`` line has been read from ink's stdout is measured. One ink process serves every run (a
``new_session`` between runs), so start-up is not measured. Used by the run-control bench.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from tests.fakeserver import FakeModelServer, Reply, tool_call

from bench.rpc_throughput import Ink, project

COMMAND = "touch started; sleep 100 & sleep 100"


def measure(runs: int, extra: tuple[str, ...] = (), label: str = "") -> dict[str, list[float]]:
    """``extra``: more flags for ink (``--sandbox off``); ``label`` is added to the row's name."""
    from tests.fakeserver import server as fake

    fake._Handler.disable_nagle_algorithm = True  # as real services (see startup_and_turn.without_nagle)
    latencies: list[float] = []
    with FakeModelServer() as server, tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        argv = [sys.executable, "-m", "ink", "--mode", "rpc", "--no-session", "--permission-mode", "yolo"]
        argv += ["--base-url", server.openai_base_url, "--api-key", "k", *extra]
        ink = Ink(server.openai_base_url, "openai", work, argv)
        ink.send({"type": "get_state", "id": "s"})
        ink.read_until(b'"get_state"')
        marker = project(work) / "started"
        for n in range(runs + 1):
            marker.unlink(missing_ok=True)
            server.script(Reply([tool_call("bash", {"command": COMMAND})]))  # an abort asks no more
            ink.send({"type": "new_session", "id": f"n{n}"})
            ink.read_until(b'"new_session"')
            ink.send({"type": "prompt", "id": f"p{n}", "text": "go"})
            deadline = time.monotonic() + 60
            while not marker.exists():
                if time.monotonic() > deadline:
                    raise SystemExit("bench: bash never started")
                time.sleep(0.001)
            time.sleep(0.02)  # the shell is now in `sleep 100`, the tool waiting on it
            started = time.perf_counter()
            ink.send({"type": "abort", "id": f"a{n}"})
            data, _ = ink.read_until(b'"run_end"')
            took = time.perf_counter() - started
            if b'"aborted"' not in data.rsplit(b"\n", 2)[-2]:
                raise SystemExit(f"bench: the run did not end aborted: {data[-300:]!r}")
            if n:  # the first warms the abort path's imports
                latencies.append(took * 1000)
        ink.close()
    return {f"abort -> run_end, bash running (RPC){label}": latencies}
