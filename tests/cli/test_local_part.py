"""The local model server is a part of the app (issue 16): a model it cannot serve stops ink at start-up
with one clear line and exit 2, and the server child it started does not outlive it (R35). The happy
path, with a real model, is in tests/real_model."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import psutil
import pytest

from ink.config import Flags, load_settings
from ink.wiring import AppStartError, open_app
from ink.wiring.local_part import LocalModelPart
from tests.cli.inkproc import ink_env, run_ink

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
