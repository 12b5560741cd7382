"""The prompt history file (``$INK_HOME/history/<project>.txt``) as it can be found: a FIFO, a link to
``/dev/zero``, a sparse file of a gigabyte, a file grown by years of pasted logs. prompt_toolkit's own
reader read it whole on the UI's loop (a link to /dev/zero filled memory) and its writer opened it with a
blocking ``open`` at each Enter (a FIFO froze the TUI). Now the newest part of a regular file is read,
nothing else is opened for long, and a prompt is never lost from the session for it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ink.frontends.tui.history import (
    MAX_PROMPT_CHARS,
    MAX_READ_BYTES,
    BoundedHistory,
    history_file,
)
from tests.fakeserver import FakeModelServer, say
from tests.tui.conftest import StartInk


def hostile(path: Path, kind: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "zero-link":
        path.symlink_to("/dev/zero")
    elif kind == "huge":
        with open(path, "wb") as file:
            file.truncate(1 << 30)  # sparse: a gigabyte of zeros, no line in it
    else:
        path.mkdir()


@pytest.mark.parametrize("kind", ["fifo", "zero-link", "huge", "folder"])
def test_a_history_file_that_is_no_history_is_read_as_empty_and_never_blocks(
    tmp_path: Path, kind: str
) -> None:
    path = tmp_path / "history.txt"
    hostile(path, kind)
    history = BoundedHistory(str(path))
    assert list(history.load_history_strings()) == []
    history.store_string("a prompt")  # a FIFO nobody reads: not opened for long, not waited on
    if kind == "huge":  # a regular file: cut back to its newest part (no prompt in it), then written
        assert list(BoundedHistory(str(path)).load_history_strings()) == ["a prompt"]


def test_prompts_round_trip_newest_first_and_a_huge_one_stays_out_of_the_file(tmp_path: Path) -> None:
    path = tmp_path / "history.txt"
    history = BoundedHistory(str(path))
    for prompt in ("first", "two\nlines", "+plus\n#hash", "x" * (MAX_PROMPT_CHARS + 1)):
        history.store_string(prompt)
    assert list(BoundedHistory(str(path)).load_history_strings()) == ["+plus\n#hash", "two\nlines", "first"]


def test_a_grown_file_is_read_from_its_newest_part_and_cut_back(tmp_path: Path) -> None:
    path = tmp_path / "history.txt"
    entry = "\n# 2026-01-01 00:00:00\n+" + "old " * 250 + "\n"
    with open(path, "w") as file:
        file.write(entry * (3 * MAX_READ_BYTES // len(entry)))
    BoundedHistory(str(path)).store_string("the newest")
    loaded = list(BoundedHistory(str(path)).load_history_strings())
    assert loaded[0] == "the newest" and all(p == "old " * 250 for p in loaded[1:])
    assert path.stat().st_size <= MAX_READ_BYTES


@settings(max_examples=100)
@given(st.lists(st.text(st.characters(blacklist_categories=("Cs",))), min_size=1, max_size=5))
def test_any_prompts_come_back_as_they_were(prompts: list[str]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "history.txt"
        for prompt in prompts:
            BoundedHistory(str(path)).store_string(prompt)
        assert list(BoundedHistory(str(path)).load_history_strings()) == prompts[::-1]


def test_the_tui_sends_a_prompt_with_a_fifo_for_its_history_file(
    fake_server: FakeModelServer, start_ink: StartInk, tmp_path: Path, project: Path
) -> None:
    hostile(history_file(tmp_path / "inkhome", project), "fifo")
    fake_server.script(say("Answered."))
    ink = start_ink()
    ink.type_line("hello")
    ink.wait_text("Answered.")
    assert fake_server.requests[0].user_texts() == ["hello"]
