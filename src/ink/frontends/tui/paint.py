"""Blocks into terminal text, with rich: markdown (code highlighted) once per finished block.

Each block is rendered exactly once, when it is printed into the scrollback; nothing here is redrawn.
Text is always handed to rich as ``Text`` (never markup), so brackets in a model's reply stay brackets.

Markdown is tight: headings left-aligned (rich centres ``#``), code blocks without rich's
padding rows, and the blank lines rich puts before and after a block dropped, so exactly one blank
line separates two blocks of a reply.
"""

from __future__ import annotations

import io
import itertools
import re
from collections.abc import Iterable
from typing import Any, ClassVar

from rich.console import Console, ConsoleOptions, JustifyMethod, RenderResult
from rich.markdown import CodeBlock, Heading, Markdown, MarkdownElement
from rich.style import Style
from rich.syntax import Syntax, SyntaxTheme
from rich.text import Text
from rich.theme import Theme as RichTheme

from ink.frontends.tui.blocks import Block, sanitize
from ink.frontends.tui.diffs import DiffLine, diff_lines
from ink.frontends.tui.theme import Theme, make_theme
from ink.frontends.tui.wrapping import width_of, wrap_chars, wrap_words

_PADDING = re.compile(r" +\n")  # rich pads lines to the width with plain spaces: useless bytes
# Rows that show nothing (spaces and colour codes only: a table's empty edge rows) at a block's ends.
_EDGE_BLANKS = re.compile(r"^(?:(?:\x1b\[[0-9;]*m| )*\n)+|(?:\n(?:\x1b\[[0-9;]*m| )*)+$")
KIND_STYLES = {
    "thinking": "dim italic",
    "user": "bold",
    "bang": "bold",
    "info": "dim",
    "warning": "yellow",
    "error": "bold red",
    "interrupted": "bold yellow",
}
TONE_STYLES = {"ok": "green", "error": "red", "interrupted": "yellow", "dim": "dim"}
DIFF_HEADERS = {"file": "bold", "hunk": "cyan", "note": "dim"}
DIFF_SIGNS = {"add": "green", "del": "red", "context": "dim"}
# rich's markdown styles that assume a dark background
LIGHT_MARKDOWN = {
    "markdown.code": "bold #af005f",
    "markdown.block_quote": "#5f5f5f",
    "markdown.hr": "#a8a8a8",
}
GROUPS = {"markdown": "reply", "thinking": "reply", "user": "user", "tool": "tool", "output": "tool"}
GROUPS |= {"diff": "tool", "bang": "tool"}  # the rest are notes


class _LeftHeading(Heading):
    LEVEL_ALIGN: ClassVar[dict[str, JustifyMethod]] = dict.fromkeys(
        ("h1", "h2", "h3", "h4", "h5", "h6"), "left"
    )


class _TightCode(CodeBlock):
    """Highlighted like rich's, without the blank padding rows above and below the code."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Syntax(
            str(self.text).rstrip(), self.lexer_name, theme=self.theme, word_wrap=True, padding=(0, 1)
        )


class TightMarkdown(Markdown):
    elements: ClassVar[dict[str, type[MarkdownElement]]] = {
        **Markdown.elements,
        "heading_open": _LeftHeading,
        "fence": _TightCode,
        "code_block": _TightCode,
    }


class Painter:
    """Renders blocks at a given width in ``theme``'s colours; ``color=False`` gives plain text (tests,
    dumb terminals), a theme without colour (NO_COLOR) its attributes only."""

    def __init__(self, *, color: bool = True, theme: Theme | None = None) -> None:
        self._last: Block | None = None
        self.theme = theme or make_theme("dark")
        self._console = Console(
            file=io.StringIO(),
            force_terminal=color,
            no_color=not (color and self.theme.color),
            theme=RichTheme(LIGHT_MARKDOWN) if self.theme.shade == "light" else None,
            highlight=False,
            emoji=False,
            width=80,
            legacy_windows=False,
        )

    def paint(self, blocks: Iterable[Block], width: int) -> str:
        console = self._console
        console.width = max(20, width)
        out: list[str] = []
        for block in blocks:
            if self._gap_before(block):
                out.append("\n")
            with console.capture() as capture:
                console.print(self._renderable(block, console.width), crop=False)
            text = _PADDING.sub("\n", capture.get())
            if block.kind == "markdown":
                text = _EDGE_BLANKS.sub("", text) + "\n"
            out.append(text)
            self._last = block
        return "".join(out)

    def _gap_before(self, block: Block) -> bool:
        """A blank line between paragraphs of a reply, and where the kind of content changes."""
        last = self._last
        if last is None:
            return False
        if block.kind == "markdown" and last.kind == "markdown":
            return True
        return GROUPS.get(block.kind, "note") != GROUPS.get(last.kind, "note")

    def _renderable(self, block: Block, width: int) -> TightMarkdown | Text:
        """Markdown and diffs are wrapped by rich; every other kind is wrapped here, at spaces, each row
        keeping its line's indentation (a wrapped output line stays under its block, a /help row under
        its description), so nothing falls back to column 0."""
        if block.kind == "listing":  # its tabs are its columns: sanitised piece by piece
            return Text(listing_rows(block.text, width), style=TONE_STYLES.get(block.tone, ""))
        text = sanitize(block.text)  # whatever made the block, no escape sequence reaches the terminal
        if block.kind == "markdown":
            return TightMarkdown(text, code_theme=self.theme.code, hyperlinks=False)
        if block.kind == "diff":
            return diff_text(text, self.theme)
        if block.kind == "user":
            return _user(text, width)
        if block.kind == "tool":
            return _tool_line(text, block.tone, width)
        style = TONE_STYLES.get(block.tone) or KIND_STYLES.get(block.kind, "")
        indent = "  " if block.kind == "output" else ""
        return Text("\n".join(_rows(text, width, indent)), style=style)


def diff_text(diff: str, theme: Theme) -> Text:
    """A unified diff: the code highlighted for its language (the theme of code blocks), added lines on
    green and removed ones on red, the words that changed brighter; signs green and red, hunk headers
    cyan. rich wraps a line longer than the width."""
    code = Syntax.get_theme(theme.code)
    text = Text()
    for line in diff_lines(diff):
        text.append_text(_diff_line(line, code, theme))
        text.append("\n")
    text.rstrip()
    return text


def _diff_line(line: DiffLine, code: SyntaxTheme, theme: Theme) -> Text:
    if line.role in DIFF_HEADERS:
        return Text("  " + line.parts[0].text, style=DIFF_HEADERS[line.role])
    background = theme.line_bg.get(line.role)
    out = Text("  ")
    out.append(line.sign, style=DIFF_SIGNS[line.role] + (f" on {background}" if background else ""))
    for part in line.parts:
        style = _token_style(code, part.token)
        shade = theme.word_bg.get(line.role) if part.changed else background
        out.append(part.text, style=style + Style(bgcolor=shade) if shade else style)
    return out


def _token_style(theme: SyntaxTheme, token: Any) -> Style:
    """The theme's colour and emphasis for a token, without the theme's own background."""
    if token is None:
        return Style()
    found = theme.get_style_for_token(token)
    return Style(color=found.color, bold=found.bold, italic=found.italic, underline=found.underline)


def _rows(text: str, width: int, indent: str = "") -> list[str]:
    return [row for line in text.split("\n") for row in wrap_words(indent + line, width)]


def _user(text: str, width: int) -> Text:
    rows = _rows(text, width, "  ")
    rows[0] = "› " + rows[0][2:]
    return Text("\n".join(rows), style="bold")


def _tool_line(text: str, tone: str, width: int) -> Text:
    """``✓ bash ls · 0.3s``: the mark in the tone's colour, the tool's name bold; all red on an error. A
    line wider than the terminal loses the end of the call's summary, never its state."""
    mark, _, rest = text.partition(" ")
    name, _, detail = rest.partition(" ")
    detail = _fit_detail(f"{mark} {name} ", detail, width)
    line = Text(mark + " ", style=TONE_STYLES.get(tone, ""))
    line.append(name, style="bold red" if tone == "error" else "bold")
    line.append(" " + detail if detail else "", style="red" if tone == "error" else "")
    return line


def _fit_detail(head: str, detail: str, width: int) -> str:
    """``detail`` (``summary · state``) cut in the summary so that ``head + detail`` fits ``width``."""
    room = width - width_of(head)
    if width_of(detail) <= room:
        return detail
    summary, sep, state = detail.rpartition(" · ")
    if not sep or width_of(state) + 4 > room:
        return wrap_chars(detail, max(1, room - 1))[0] + "…"
    kept = wrap_chars(summary, max(1, room - width_of(state) - 4))[0]
    return f"{kept}… · {state}"


def listing_rows(text: str, width: int) -> str:
    """A two-column listing (``TERM<TAB>WHAT`` lines; a line without a tab is a heading): under each
    heading the terms in a column, each description wrapped beside its term and under itself. Below 60
    columns, or for a term wider than a third of the row, the description goes under its term."""
    entries = [[sanitize(piece) for piece in line.split("\t", 1)] for line in text.split("\n")]
    rows: list[str] = []
    column = 0
    for i, entry in enumerate(entries):
        if len(entry) == 1:
            rows.extend(wrap_words(entry[0], width))
            column = 0
            continue
        if column == 0:  # the first entry under a heading: the column fits this group's terms
            group = [e[0] for e in itertools.takewhile(lambda e: len(e) == 2, entries[i:])]
            column = min(max(width_of(t) for t in group), width // 3)
        rows.extend(_listing_entry(entry[0], entry[1], column, width))
    return "\n".join(rows)


def _listing_entry(term: str, what: str, column: int, width: int) -> list[str]:
    if width < 60 or width_of(term) > column:
        return [f"  {term}", *wrap_words(f"      {what}", width)]
    described = wrap_words(" " * (column + 4) + what, width)
    first = f"  {term}{' ' * (column - width_of(term))}  " + described[0].lstrip(" ")
    return [first, *described[1:]]
