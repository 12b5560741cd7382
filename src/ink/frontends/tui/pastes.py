"""Long pastes stand in the editor as one placeholder, ``[pasted 5,000 lines]``, instead of filling it
(and the scrollback) with their text; the text itself goes with the prompt.

A placeholder is plain text in the editor: it is sent as the pasted text it stands for, Backspace
takes it away whole, Ctrl+O (on an input holding one) or Ctrl+G puts the text itself back to be edited.
Changed by hand, it no longer stands for anything and is sent as typed. The texts are kept for the
session, so a prompt recalled with Up still expands.
"""

from __future__ import annotations

import re

MIN_LINES = 12  # a paste of more lines is held
MIN_CHARS = 4000  # or of more characters
_PLACEHOLDER = re.compile(r"\[pasted [0-9,]+ (?:lines|characters)(?: #[0-9]+)?\]")


class Pastes:
    def __init__(self) -> None:
        self._held: dict[str, str] = {}

    def hold(self, text: str) -> str:
        """What the editor gets for a paste of ``text``: the text itself when short, else a placeholder."""
        lines = text.count("\n") + (0 if text.endswith("\n") else 1)
        if lines <= MIN_LINES and len(text) <= MIN_CHARS:
            return text
        size = f"{lines:,} lines" if lines > MIN_LINES else f"{len(text):,} characters"
        number = len(self._held) + 1
        placeholder = f"[pasted {size}]" if number == 1 else f"[pasted {size} #{number}]"
        self._held[placeholder] = text
        return placeholder

    def expand(self, text: str) -> str:
        """``text`` with every placeholder of this session replaced by the paste it stands for."""
        if not self._held:
            return text
        return _PLACEHOLDER.sub(lambda found: self._held.get(found.group(0), found.group(0)), text)

    def holds(self, text: str) -> bool:
        return any(found.group(0) in self._held for found in _PLACEHOLDER.finditer(text))

    def ending(self, text: str) -> str | None:
        """The placeholder ``text`` ends with, if any (Backspace takes it away whole)."""
        for placeholder in self._held:
            if text.endswith(placeholder):
                return placeholder
        return None
