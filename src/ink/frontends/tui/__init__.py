"""The interactive terminal UI (``ink``, ``ink "prompt"``, ``ink --continue``, ``ink --resume ID``).

Modules, one job each:
    splitter.py  a streamed reply cut into finished markdown blocks
    view.py      the renderer: run events in, printed blocks and live state out (no terminal)
    toolview.py  tool calls and results as lines, from what each tool says of itself: titles, folding,
                 the diffs of its details, permission previews
    diffs.py     a unified diff as styled lines: code highlighted (pygments), changed words marked
    paint.py     blocks into terminal text with rich (markdown once per finished block)
    panels.py    live area, queue panel, permission question, status line (prompt_toolkit fragments)
    layout.py    the screen below the scrollback, and its style
    keys.py      the key map (``KEYS`` is what /help prints)
    commands.py  slash commands
    palette.py   the menu under the input after / and @ (fuzzy.py ranks, file_index.py lists files)
    editor.py    restored input back into the editor (R22, R30)
    app.py       the prompt_toolkit Application: events to the view, keys to the controller, painting
    terminal.py  start-up, signals, the forced exit, the end

prompt_toolkit and rich are imported only when the UI starts, never by ``ink --version``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ink.config import Invocation, Settings


def main(settings: Settings, invocation: Invocation) -> int:
    """Entry point called by the command line after the settings were checked."""
    from ink.frontends.tui.terminal import run_tui

    return run_tui(settings, invocation)
