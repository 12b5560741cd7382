"""What the user asked this process to do, beyond settings: the mode and its inputs.

The command line builds one ``Invocation`` and hands it, with the ``Settings``, to the chosen frontend's
``main(settings, invocation) -> int``.
"""

from __future__ import annotations

from typing import Literal

import msgspec

Mode = Literal["tui", "print", "rpc", "acp", "sessions", "models", "mcp", "sandbox"]
OutputFormat = Literal["text", "stream-json"]


class Invocation(msgspec.Struct, frozen=True):
    """What the command line asks for: the mode and, for print mode and the TUI, the first prompt."""

    mode: Mode
    prompt: str | None = None  # the first prompt (tui) or the whole task (print)
    output_format: OutputFormat = "text"
    continue_session: bool = False  # --continue: the latest session of the working directory
    resume_id: str | None = None  # --resume ID
    pick_session: bool = False  # --resume without an id: the TUI lets the user pick one
