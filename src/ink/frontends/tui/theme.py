"""The colours of the TUI, for a dark or a light terminal (``theme = "dark" | "light" | "auto"``), and
none at all when ``NO_COLOR`` is set (no-color.org: any non-empty value).

``auto`` asks the terminal for its background (OSC 11, answered by xterm, VTE, iTerm2, kitty, tmux...)
while ink starts, then falls back to ``COLORFGBG`` (set by rxvt and Konsole), then to dark. Code blocks
and diffs take a pygments style chosen by the theme (``code_theme`` picks another), and a diff's shades
are the theme's: monokai's near-white text and dark green shades were unreadable on a light terminal.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal

import msgspec

Shade = Literal["dark", "light"]
CODE_THEMES: Mapping[Shade, str] = {"dark": "monokai", "light": "default"}
BACKGROUND_REPLY = re.compile(r"\x1b\]11;rgb:([0-9a-fA-F]{1,4})/([0-9a-fA-F]{1,4})/([0-9a-fA-F]{1,4})")
ASK_BACKGROUND = "\x1b]11;?\x1b\\"


class Theme(msgspec.Struct, frozen=True):
    shade: Shade = "dark"
    color: bool = True  # False: NO_COLOR, attributes (bold, dim, reverse) only
    code: str = "monokai"  # the pygments style of code and diffs
    line_bg: Mapping[str, str] = msgspec.field(default_factory=dict)  # a changed line's background
    word_bg: Mapping[str, str] = msgspec.field(default_factory=dict)  # the words in it that changed
    styles: Mapping[str, str] = msgspec.field(default_factory=dict)  # the app's parts (prompt_toolkit)


_COMMON = {
    "tool.mark": "ansicyan",
    "tool.agent.open": "bold",
    "plan.in-progress": "bold",
    "queue.steer": "ansicyan",
    "queue.follow_up": "ansimagenta",
    "question.title": "bold ansiyellow",
    "question.key": "reverse bold",
    "question.command": "bold",
    "diff.add": "ansigreen",
    "diff.del": "ansired",
    "diff.hunk": "ansicyan",
    "diff.file": "bold",
    "status.running": "bold ansigreen",
    "status.aborting": "bold ansiyellow",
    "status.paused": "bold ansicyan",
    "prompt": "bold ansicyan",
}
_GREYS: Mapping[Shade, Mapping[str, str]] = {
    "dark": {"soft": "#8a8a8a", "faint": "#6c6c6c", "rule": "#4e4e4e"},
    "light": {"soft": "#5f5f5f", "faint": "#767676", "rule": "#a8a8a8"},
}
_GREY_PARTS = {
    "thinking": "italic soft",
    "tool.state": "soft",
    "tool.output": "soft",
    "tool.agent": "soft",
    "queue.title": "soft",
    "plan.title": "soft",
    "plan.completed": "faint",
    "plan.done": "faint",
    "diff.context": "faint",
    "status.idle": "soft",
    "status.info": "soft",
    "hint": "faint",
    "rule": "rule",
}


def make_theme(shade: Shade, code_theme: str = "", color: bool = True) -> Theme:
    greys = _GREYS[shade]
    styles = dict(_COMMON)
    for part, grey in _GREY_PARTS.items():
        styles[part] = " ".join(greys.get(word, word) for word in grey.split())
    if shade == "light":
        styles |= {"question.title": "bold #af5f00", "status.running": "bold #008700"}
        line_bg, word_bg = {"add": "#dafbe1", "del": "#ffebe9"}, {"add": "#aceebb", "del": "#ffcecb"}
    else:
        line_bg, word_bg = {"add": "#12351c", "del": "#3d1518"}, {"add": "#23753a", "del": "#8a2a2f"}
    code = code_theme or CODE_THEMES[shade]
    return Theme(shade, color, code, line_bg, word_bg, styles)


def choose(setting: str, code_theme: str, env: Mapping[str, str], background: str | None) -> Theme:
    """The theme for ``setting`` (auto, dark, light); ``background``: the terminal's answer to
    ``ASK_BACKGROUND``, if any. An unknown ``code_theme`` falls back to the theme's own."""
    shade: Shade
    if setting in ("dark", "light"):
        shade = "light" if setting == "light" else "dark"
    else:
        shade = background_shade(background) or colorfgbg_shade(env.get("COLORFGBG", "")) or "dark"
    return make_theme(shade, code_theme if known_style(code_theme) else "", color=not env.get("NO_COLOR"))


def background_shade(reply: str | None) -> Shade | None:
    """Dark or light from an OSC 11 answer (``ESC ] 11 ; rgb:RRRR/GGGG/BBBB``), by its luminance."""
    found = BACKGROUND_REPLY.search(reply or "")
    if found is None:
        return None
    red, green, blue = (int(part, 16) / (16 ** len(part) - 1) for part in found.groups())
    luminance = 0.2126 * red + 0.7152 * green + 0.0722 * blue
    return "light" if luminance > 0.5 else "dark"


def colorfgbg_shade(value: str) -> Shade | None:
    """``COLORFGBG=15;0`` (white on black): the background's ANSI number, 7 and 9-15 being light."""
    last = value.rsplit(";", 1)[-1].strip()
    if not last.isdecimal():  # isdigit takes "²", which int() refuses
        return None
    return "light" if int(last) in (7, *range(9, 16)) else "dark"


def known_style(name: str) -> bool:
    if not name:
        return False
    from pygments.styles import get_all_styles

    return name in set(get_all_styles())
