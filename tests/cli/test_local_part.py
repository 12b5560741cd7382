"""The local model server is a part of the app (issue 16): a model it cannot serve stops ink at start-up
with one clear line and exit 2, and the server child it started does not outlive it (R35). The happy
path, with a real model, is in tests/real_model."""

from __future__ import annotations

import importlib.util
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from ink.config import Flags, load_settings
from ink.wiring import AppStartError, open_app
from ink.wiring.local_part import LocalModelPart
from tests.cli.inkproc import ink_env, run_ink
from tests.waiting import poll_until

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("xllamacpp") is None, reason="the local runtime (pip install '.[local]')"
)


def _servers_of(model: Path) -> list[int]:
    """Model server processes serving ``model`` (a path of this test's own: other inks are not counted)."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        line = " ".join(process.info["cmdline"] or ())
        if "ink.local.serve" in line and str(model) in line:
            found.append(process.pid)
    return found


def test_a_model_the_server_cannot_load_is_one_line_and_exit_2(tmp_path: Path) -> None:
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"not a model at all\n" * 64)
    args = ["--provider", "local", "--model-path", str(junk), "--no-session", "-p", "hi"]
    done = run_ink(args, ink_env(tmp_path), tmp_path, timeout=120)
    assert done.returncode == 2, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ink: the local model server could not serve"), done.stderr
    assert "Traceback" not in done.stderr
    assert _servers_of(junk) == []  # no server child of this ink is left


async def test_open_app_names_the_failure_and_leaves_no_server(tmp_path: Path) -> None:
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"GGUF but not really\n" * 64)
    env = {"INK_HOME": str(tmp_path / "inkhome"), "HOME": str(tmp_path)}
    settings = load_settings(Flags(provider="local", model_path=str(junk), no_session=True), env, tmp_path)
    part = LocalModelPart()
    with pytest.raises(AppStartError, match="could not serve"):
        async with open_app(settings, parts=[part]):
            pass
    assert part.server is None


LOAD_IN_A_CHILD = """
import asyncio, os, sys
from pathlib import Path
from ink.config import Flags, load_settings
from ink.wiring import open_app
flags = Flags(provider="local", model_path=sys.argv[1], no_session=True)
settings = load_settings(flags, {"INK_HOME": sys.argv[2]}, Path.cwd())
os.remove(sys.argv[1])
os.mkfifo(sys.argv[1])  # checked as a file above; now a load that never ends
async def main():
    async with open_app(settings):
        pass
try:
    asyncio.run(main())
except KeyboardInterrupt:
    sys.exit(130)
"""


def test_ctrl_c_while_the_model_loads_ends_ink_at_once_and_leaves_no_server(tmp_path: Path) -> None:
    """The start blocks the event loop (nothing else exists yet), and asyncio's own Ctrl+C handling waits
    for the loop to turn: the first Ctrl+C must end the load at once, and the child with it (R35). A model
    path that is a FIFO nobody writes makes the load hang for as long as the test likes."""
    fifo = tmp_path / "hangs.gguf"
    fifo.write_bytes(b"GGUF")
    argv = [sys.executable, "-c", LOAD_IN_A_CHILD, str(fifo), str(tmp_path / "inkhome")]
    child = subprocess.Popen(argv, cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    assert child.stderr is not None
    seen = ""
    while "starting the local model server" not in seen:
        line = child.stderr.readline()
        assert line, f"it ended before loading: {seen}"
        seen += line
    poll_until(lambda: _servers_of(fifo) != [], 30, "the server child")
    child.send_signal(signal.SIGINT)
    assert child.wait(timeout=30) == 130, seen + child.stderr.read()
    poll_until(lambda: _servers_of(fifo) == [], 30, "the server child to end (R35)")
