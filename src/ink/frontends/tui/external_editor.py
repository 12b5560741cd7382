"""Ctrl+G: the input written in the user's own editor, as a markdown file that ends in a newline (an
editor shows a file without one as broken, and ``.md`` gives the prompt its highlighting).

The editor runs in the terminal while the UI steps aside (prompt_toolkit's ``run_in_terminal``); what is
saved comes back into the input, its last newline dropped; an editor that fails leaves the input as it
was.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

from prompt_toolkit.application import run_in_terminal
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.document import Document

FALLBACKS = ("editor", "nano", "pico", "vi", "emacs")


async def edit_in_editor(buffer: Buffer, text: str) -> None:
    """Open ``text`` in ``$VISUAL``/``$EDITOR``; the saved file becomes the buffer's text."""
    edited = await run_in_terminal(lambda: _edit(text), in_executor=True)
    if edited is not None:
        buffer.set_document(Document(edited, len(edited)), bypass_readonly=True)


def _edit(text: str) -> str | None:
    """The text as saved in the editor (its last newline dropped), None when no editor ran and exited
    0. Runs in a thread, with the terminal given to the editor."""
    descriptor, name = tempfile.mkstemp(prefix="ink-prompt-", suffix=".md")
    path = Path(name)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text if text.endswith("\n") else text + "\n")
        if not _run_editor(path):
            return None
        edited = path.read_text(encoding="utf-8", errors="replace")
        return edited[:-1] if edited.endswith("\n") else edited
    finally:
        path.unlink(missing_ok=True)


def _run_editor(path: Path) -> bool:
    """True when an editor ran and exited 0."""
    for command in _editors():
        try:
            return subprocess.call([*command, str(path)]) == 0
        except OSError:
            continue
    return False


def _editors() -> list[list[str]]:
    chosen = [os.environ.get("VISUAL", ""), os.environ.get("EDITOR", "")]
    found = [shlex.split(value) for value in chosen if value.strip()]
    return found + [[name] for name in FALLBACKS if shutil.which(name)]
