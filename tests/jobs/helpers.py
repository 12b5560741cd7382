"""What the background-job tests share: a free port, a dev server command, the pids of a job's tree."""

from __future__ import annotations

import socket
import sys
import urllib.error
import urllib.request
from pathlib import Path

from tests.cli.inkproc import ink_env
from tests.processes import gone

# network on: a dev server must bind, a later call must reach it; the sandbox itself stays on
SANDBOX_WITH_NETWORK = "[sandbox]\nnetwork = true\n"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def dev_server(port: int) -> str:
    """A real dev server: Python's http.server on ``port``, serving the project folder."""
    return f"exec {sys.executable} -m http.server {port} --bind 127.0.0.1"


def fetch(port: int, path: str = "notes.txt", timeout: float = 2.0) -> str | None:
    """The body the server gives for ``path``; None when nothing answers on the port."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/{path}", timeout=timeout) as answer:
            return str(answer.read().decode())
    except (urllib.error.URLError, OSError):
        return None


def reach_command(port: int) -> str:
    """A later bash call that reaches the server (waiting, bounded, until it listens)."""
    script = (
        "import time, urllib.request\n"
        f"url = 'http://127.0.0.1:{port}/notes.txt'\n"
        "for _ in range(600):\n"
        "    try:\n"
        "        print(urllib.request.urlopen(url, timeout=2).read().decode())\n"
        "        break\n"
        "    except OSError:\n"
        "        time.sleep(0.05)\n"
    )
    return f"{sys.executable} - <<'EOF'\n{script}EOF"


def jobs_env(tmp_path: Path) -> dict[str, str]:
    env = ink_env(tmp_path)
    home = Path(env["INK_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(SANDBOX_WITH_NETWORK)
    return env


def pids_in(folder: Path, names: list[str]) -> list[int]:
    return [int((folder / f"{name}.pid").read_text().strip()) for name in names]


def all_gone(pids: list[int]) -> bool:
    return all(gone(pid) for pid in pids)
