"""Issue 30's first run in the terminal UI: ``ink`` with no provider key and nothing chosen starts on
the embedded starter model, saying so in one line with how to pick a real provider, instead of stopping
with "no API key for openai". The real TUI in a pseudo-terminal; no prompt is sent (the model's pace is
the machine's): the start is what is checked."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ink import __version__
from tests.tui.terminal import InkTerminal

pytestmark = [pytest.mark.real_model, pytest.mark.timeout(1200)]
LOADING = 600.0  # the model server's start on a loaded two-core machine: a bound only a hang reaches


def test_ink_with_no_key_opens_the_ui_on_the_starter_model_and_says_so(
    local_env: dict[str, str], tmp_path: Path
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    ink = InkTerminal([], local_env | {"TERM": "xterm-256color"}, project)
    try:
        ink.wait_text(f"ink {__version__} · smollm2-135m-instruct ·", timeout=LOADING)
        ink.wait_text("○ idle")
        shown = "".join(ink.lines())  # the note is one line, wrapped at the terminal's width
        assert shown.count("no provider key is set") == 1
        assert "OPENAI_API_KEY" in shown and "--provider" in shown
        assert shown.count("starting the local model server") == 1 and shown.count("local model ready") == 1
        loading = [int(s) for s in re.findall(r"still loading \S+ \((\d+) s\)", shown)]
        assert loading == sorted(set(loading)), loading  # a restart with ink's template counts on
        ink.send("\x03\x03")
        assert ink.wait_exit(60) == 0
    finally:
        ink.close()
