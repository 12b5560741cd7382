"""SIGINT -> exit of ``ink -p`` while a reply streams, against the stdlib baseline loop in the same spot.

Both processes stream from the fake server, which holds the reply at a gate; once the gate is reached
the process gets SIGINT, and the time until it has exited (``waitpid``) is measured. Used by the
run-control bench (bench/run_control.py); target (issue 11): ink <= 50 ms.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.fakeserver import FakeModelServer, Gate, Reply, text

BASELINE = Path(__file__).resolve().parent / "baseline_loop.py"


def ink_argv(server: FakeModelServer) -> list[str]:
    base = server.openai_base_url
    return [sys.executable, "-m", "ink", "-p", "--no-session", "--base-url", base, "--api-key", "k", "go"]


def baseline_argv(server: FakeModelServer) -> list[str]:
    return [sys.executable, str(BASELINE), server.openai_base_url, "go"]


def sigint_to_exit(server: FakeModelServer, argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """Milliseconds from SIGINT to the exit of ``argv``, sent once its stream is held at a gate."""
    gate = Gate(timeout=60)
    server.script(Reply([text("partial "), gate, text("never sent")]))
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        gate.wait_reached(timeout=60)
        started = time.perf_counter()
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
        return (time.perf_counter() - started) * 1000
    finally:
        gate.open()
        proc.kill()
        proc.wait()


def measure(runs: int) -> dict[str, list[float]]:
    results: dict[str, list[float]] = {"SIGINT -> exit (ink -p)": [], "SIGINT -> exit (stdlib baseline)": []}
    with FakeModelServer() as server, tempfile.TemporaryDirectory() as tmp:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tmp, "INK_HOME": tmp}
        env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent / "src")
        for _ in range(runs):
            results["SIGINT -> exit (ink -p)"].append(
                sigint_to_exit(server, ink_argv(server), env, Path(tmp))
            )
            baseline = sigint_to_exit(server, baseline_argv(server), env, Path(tmp))
            results["SIGINT -> exit (stdlib baseline)"].append(baseline)
    return results


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    for name, values in measure(int(sys.argv[1]) if len(sys.argv) > 1 else 5).items():
        print(name, sorted(values))
