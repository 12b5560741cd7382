"""``/rewind N`` typed in an editor: a number is decimal digits only. ``isdigit`` also takes "²" and "①",
which ``int`` refuses: the command raised instead of answering with its usage."""

from __future__ import annotations

from ink.frontends.acp.rewind import USAGE, Request, parse


def test_rewind_takes_decimal_numbers_and_answers_usage_for_others() -> None:
    assert parse("/rewind 2") == Request(2, True, True, False)
    for typed in ("/rewind ²", "/rewind ①", "/rewind 0", "/rewind x"):
        assert parse(typed) == USAGE, typed
