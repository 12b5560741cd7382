"""Fixtures for the TUI tests: ink in a pseudo-terminal against the fake model server."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ink import __version__
from tests.cli.inkproc import ink_env
from tests.fakeserver import FakeModelServer
from tests.tui.terminal import COLUMNS, ROWS, InkTerminal

StartInk = Callable[..., InkTerminal]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    work = tmp_path / "proj"
    work.mkdir()
    return work


@pytest.fixture
def start_ink(fake_server: FakeModelServer, tmp_path: Path, project: Path) -> Iterator[StartInk]:
    """Start ``ink`` (the TUI) in a pseudo-terminal; every one started is closed after the test."""
    started: list[InkTerminal] = []

    def start(
        *args: str,
        config: str = "",
        wait_ready: bool = True,
        permission_mode: str = "yolo",
        env: dict[str, str] | None = None,
        rows: int = ROWS,
        columns: int = COLUMNS,
        shell: bool = False,
        background: str | None = None,
    ) -> InkTerminal:
        env = ink_env(tmp_path, TERM="xterm-256color", **(env or {}))
        if config:
            home = Path(env["INK_HOME"])
            home.mkdir(parents=True, exist_ok=True)
            (home / "config.toml").write_text(config)
        base = [
            "--base-url",
            fake_server.openai_base_url,
            "--api-key",
            "k",
            "--permission-mode",
            permission_mode,
        ]
        terminal = InkTerminal(
            [*base, *args], env, project, rows, columns, shell=shell, background=background
        )
        started.append(terminal)
        if wait_ready:
            terminal.wait_text(f"ink {__version__} · ")  # the banner
            terminal.wait_text("○ idle")
        return terminal

    yield start
    for terminal in started:
        terminal.close()
