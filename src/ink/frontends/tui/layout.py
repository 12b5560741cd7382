"""The screen below the scrollback: live area, permission question, plan, queue panel, rule, input, status.

Not full screen: prompt_toolkit draws these few rows under the last printed line, and the terminal keeps
its own scrollback above them.
"""

from __future__ import annotations

from collections.abc import Callable

from prompt_toolkit.buffer import Buffer
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.layout import ConditionalContainer, HSplit, Layout, Window
from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
from prompt_toolkit.layout.dimension import Dimension

INPUT_ROWS = 8  # the editor grows to this many rows, then scrolls

Fragments = Callable[[], StyleAndTextTuples]


def build_layout(
    buffer: Buffer,
    *,
    live: Fragments,
    question: Fragments,
    queue: Fragments,
    status: Fragments,
    has_question: Callable[[], bool],
    has_queue: Callable[[], bool],
    picker: Fragments = list,
    has_picker: Callable[[], bool] = lambda: False,
    menu: Fragments = list,
    has_menu: Callable[[], bool] = lambda: False,
    plan: Fragments = list,
    has_plan: Callable[[], bool] = lambda: False,
) -> Layout:
    """``picker``: the rewind list (frontends/tui/rewind.py), shown while ``has_picker``; ``menu``: the
    menu of commands, values and files (palette.py) or the history search (history_search.py), right
    above the input; ``plan``: the model's checklist (frontends/tui/plan.py), above the queue while
    ``has_plan``."""

    def prefix(line: int, wrap: int) -> StyleAndTextTuples:
        return [("class:prompt", "› " if line == 0 and wrap == 0 else "  ")]

    editor = Window(
        BufferControl(buffer),
        height=Dimension(min=1, max=INPUT_ROWS),
        wrap_lines=True,
        get_line_prefix=prefix,
        dont_extend_height=True,
    )
    return Layout(
        HSplit(
            [
                _panel(live),
                ConditionalContainer(_panel(question), filter=Condition(has_question)),
                ConditionalContainer(_panel(picker), filter=Condition(has_picker)),
                ConditionalContainer(_panel(plan), filter=Condition(has_plan)),
                ConditionalContainer(_panel(queue), filter=Condition(has_queue)),
                ConditionalContainer(_panel(menu), filter=Condition(has_menu)),
                Window(height=1, char="─", style="class:rule"),
                editor,
                _panel(status),
            ]
        ),
        focused_element=editor,
    )


def _panel(fragments: Fragments) -> Window:
    return Window(
        FormattedTextControl(fragments, focusable=False, show_cursor=False),
        dont_extend_height=True,
        wrap_lines=False,
    )
