"""The permission question as the screen shows it: what is asked, as much of it as the rows allow (all
of it by scrolling once the question has the keyboard), the answer keys, the rule "always" stores, and
how to answer (``question.QuestionFocus`` says who has the keyboard).

The body (the command, the diff of a change, else the arguments) is wrapped into rows once per question
and width, so a long write scrolls without redoing its diff on every frame.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

import msgspec
from prompt_toolkit.utils import get_cwidth

from ink.agent.tool import CallDescription
from ink.frontends.tui.blocks import Block, sanitize, shown_exactly
from ink.frontends.tui.diffs import diff_lines
from ink.frontends.tui.panels import fit_items
from ink.frontends.tui.theme import Theme, make_theme
from ink.frontends.tui.toolview import preview
from ink.frontends.tui.wrapping import wrap_chars, wrap_words
from ink.run.events import PermissionRequest

Fragments = list[tuple[str, str]]
KeysState = Literal["wait", "ready", "answering"]
BODY_LINES = 20_000  # lines of a body kept for scrolling; past them a note says how many more there are
ANSWER_LABELS = (("y", "allow once"), ("a", "always allow"), ("n", "deny"))
SHORT_ANSWER_LABELS = (("y", "once"), ("a", "always"), ("n", "deny"))
WIDE_QUESTION = 50  # columns the long answer labels need
DIFF_HEADERS = {"file": "class:diff.file", "hunk": "class:diff.hunk", "note": "class:hint"}


class Asking(msgspec.Struct, frozen=True):
    """What the panel draws. ``keys``: "wait" (no hand-over yet: the question is new or typing goes
    on), "ready" (Tab on an empty input or Ctrl+O hands it the keyboard), "answering" (it has it).
    ``wait``: seconds left before "ready"; ``typing``: the editor holds text (Tab completes there);
    ``scroll``: the first body row shown."""

    question: PermissionRequest
    described: CallDescription
    waiting: int = 0
    keys: KeysState = "answering"
    wait: float = 0.0
    typing: bool = False
    scroll: int = 0
    asker: str = ""  # the sub-agent that asks, as its line names it ("[1] general")


class QuestionPanel:
    def __init__(self, theme: Theme | None = None) -> None:
        self._theme = theme or make_theme("dark")
        self._cached: tuple[str, int, list[Fragments]] | None = None

    def body_rows(self, asking: Asking, width: int) -> list[Fragments]:
        """Every row of the question's body at ``width`` columns (kept while the question and the width
        stay the same)."""
        key = asking.question.request_id
        if self._cached is not None and self._cached[:2] == (key, width):
            return self._cached[2]
        block = preview(asking.described, asking.question.args, BODY_LINES)
        rows = body_rows(block, width, self._theme)
        self._cached = (key, width, rows)
        return rows

    def draw(self, asking: Asking, width: int, max_rows: int) -> tuple[Fragments, int]:
        """The panel in at most ``max_rows`` rows (fewer when the body is short), and the scroll
        position used (``asking.scroll`` kept within the body)."""
        head = _title_rows(asking.question, asking.asker, width)
        hint = [] if asking.keys == "answering" else [_hint_row(asking, width)]  # the status line's then
        tail = [*_keys_rows(asking, width), *_rule_rows(asking.question, width), *hint]
        body = self.body_rows(asking, width)
        room = max(1, max_rows - len(head) - len(tail))
        if len(body) > room:
            room = max(1, room - 1)  # a row saying where in the body the view is
        scroll = max(0, min(asking.scroll, len(body) - room))
        shown = body[scroll : scroll + room]
        note = _position_row(asking.keys, scroll, len(shown), len(body)) if len(body) > len(shown) else []
        rows = [*head, *shown, *([note] if note else []), *tail]
        out: Fragments = []
        for row in rows:
            out.extend(row)
            out.append(("", "\n"))
        out.pop()
        return out, scroll


def body_rows(block: Block, width: int, theme: Theme) -> list[Fragments]:
    """The preview as screen rows, indented two columns: a diff highlighted and shaded as the scrollback
    shows it, a command or arguments cut where the row ends (each character where it stands)."""
    if block.kind == "diff":
        return diff_rows(block.text, width, theme)
    command = block.kind == "bang"  # a command keeps every character where it stands
    style = "class:question.command" if command else "class:question.text"
    wrap = wrap_chars if command else wrap_words  # arguments wrap at words, under their key
    rows: list[Fragments] = []
    for line in block.text.split("\n"):
        rows.extend([("", "  "), (style, piece)] for piece in wrap(line, max(1, width - 2)))
    return rows


def diff_rows(diff: str, width: int, theme: Theme) -> list[Fragments]:
    """A unified diff as the scrollback shows it (``paint.diff_text``): code highlighted, changed lines
    shaded, changed words brighter; each line wrapped at ``width`` columns."""
    rows: list[Fragments] = []
    for line in diff_lines(diff):
        if line.role in DIFF_HEADERS:
            pieces: Fragments = [(DIFF_HEADERS[line.role], line.parts[0].text)]
        else:
            shade = theme.line_bg.get(line.role)
            background = f" bg:{shade}" if shade else ""
            pieces = [(f"class:diff.{line.role}{background}", line.sign)]
            for part in line.parts:
                lit = theme.word_bg.get(line.role, shade) if part.changed else shade
                pieces.append(
                    (_token_style(part.token, theme.code) + (f" bg:{lit}" if lit else ""), part.text)
                )
        rows.extend([("", "  "), *row] for row in _wrap_fragments(pieces, max(1, width - 2)))
    return rows


def _title_rows(question: PermissionRequest, asker: str, width: int) -> list[Fragments]:
    """``allow bash?`` (who asks: a sub-agent by its line's name) and why ink asks, wrapped at spaces,
    never cut."""
    if question.source is not None and not asker:
        asker = f"sub-agent {question.source.agent}"
    title = f"allow {question.name}?" + (f" ({asker})" if asker else "")
    reason = sanitize(question.reason or "")
    words = wrap_words(f"{title}  {reason}" if reason else title, width)
    rows: list[Fragments] = []
    for i, row in enumerate(words):
        if i == 0 and row.startswith(title):
            rows.append([("class:question.title", title), ("class:hint", row[len(title) :])])
        else:
            rows.append([("class:hint", row)])
    return rows


def _keys_rows(asking: Asking, width: int) -> list[Fragments]:
    live = asking.keys == "answering"
    key_style = "class:question.key" if live else "class:hint"
    label_style = "class:question.label" if live else "class:hint"
    labels = ANSWER_LABELS if width >= WIDE_QUESTION else SHORT_ANSWER_LABELS  # a narrow terminal
    row: Fragments = []
    for key, label in labels:
        row += [(key_style, f" {key} "), (label_style, f" {label}   ")]
    if asking.waiting:
        more = f"+{asking.waiting} more waiting"
        used = sum(get_cwidth(text) for _style, text in row)
        if used + len(more) <= width:
            row.append(("class:hint", more))
        else:
            return [row, [("class:hint", more)]]
    return [row]


def _rule_rows(question: PermissionRequest, width: int) -> list[Fragments]:
    """What "always" stores, whole: the rule a person can read back in the remembered answers."""
    if not question.remember:
        return []
    text = f"a: always allow stores the rule {shown_exactly(question.remember)} for this project"
    return [[("class:hint", row)] for row in wrap_words(text, width)]


def _hint_row(asking: Asking, width: int) -> Fragments:
    if asking.keys == "ready" and asking.typing:
        hint = "ctrl+o answer it (the input keeps its text) · esc interrupt the run"
    elif asking.keys == "ready":
        hint = "tab answer it · ctrl+o see it whole · esc interrupt the run"
    else:
        hint = f"tab answers once typing pauses ({asking.wait:.1f}s) · esc interrupt the run"
    return [("class:hint", fit_items(hint, width - 1))]


def _position_row(keys: KeysState, scroll: int, shown: int, total: int) -> Fragments:
    if keys == "answering":
        text = f"  rows {scroll + 1}-{scroll + shown} of {total} · ↑↓ pgup pgdn scroll · ctrl+o all rows"
    else:
        text = f"  … {total - scroll - shown} more rows · ctrl+o shows all"
    return [("class:hint", text)]


def _wrap_fragments(pieces: Fragments, width: int) -> list[Fragments]:
    rows: list[Fragments] = [[]]
    used = 0
    for style, text in pieces:
        for char in text.replace("\t", "    "):
            w = get_cwidth(char)
            if used + w > width and used:
                rows.append([])
                used = 0
            row = rows[-1]
            if row and row[-1][0] == style:
                row[-1] = (style, row[-1][1] + char)
            else:
                row.append((style, char))
            used += w
    return rows


def _token_style(token: object, code: str) -> str:
    """A pygments token's colour and emphasis in the code theme, as a prompt_toolkit style."""
    if token is None:
        return "class:question.text"
    return _style_of(token, code)


@lru_cache(maxsize=256)
def _style_of(token: object, code: str) -> str:
    from pygments.styles import get_style_by_name

    found = get_style_by_name(code).style_for_token(token)
    style = f"fg:#{found['color']}" if found["color"] else ""
    return " ".join(
        filter(None, [style, "bold" if found["bold"] else "", "italic" if found["italic"] else ""])
    )
