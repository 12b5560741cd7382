"""The terminal UI with an MCP server: its question is a form answered by a command (R38: no typing
for the editor answers it), its prompts complete after /, its resources after @."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ink.frontends.tui.mcp_question import parse_answer, question_text
from ink.mcp.elicitation import BadAnswer
from ink.run.events import ElicitationRequest
from tests.fakeserver import FakeModelServer, call, say
from tests.tui.conftest import StartInk, project, start_ink  # noqa: F401  (fixtures)

HOSTILE = str(Path(__file__).with_name("hostile.py"))
CONFIG = f"[mcp.servers.h]\ncommand = {json.dumps(sys.executable)}\nargs = {json.dumps([HOSTILE])}\n"
TAB = "\t"
SCHEMA = {
    "type": "object",
    "properties": {
        "color": {"type": "string", "enum": ["red", "blue"], "description": "the color"},
        "count": {"type": "integer", "minimum": 1},
        "loud": {"type": "boolean", "default": False},
        "tags": {"type": "array", "items": {"enum": ["a", "b"]}},
    },
    "required": ["color"],
}


def test_the_form_says_each_field_and_an_answer_is_read_by_the_schema() -> None:
    text = question_text(ElicitationRequest("e1", "h", "Pick", SCHEMA))
    assert text.splitlines()[0] == "MCP server h asks: Pick"
    assert "color  one of red, blue, required  the color" in text
    assert "loud   true/false  (default False)" in text
    answer = parse_answer(SCHEMA, 'color=blue count=3 tags="a,b"')
    assert answer == {"loud": False, "color": "blue", "count": 3, "tags": ["a", "b"]}
    with pytest.raises(BadAnswer, match="whole number"):
        parse_answer(SCHEMA, "count=x")
    with pytest.raises(BadAnswer, match="'size' is not asked for"):
        parse_answer(SCHEMA, "size=2")


def test_a_servers_question_is_answered_with_a_command_and_prompts_complete(
    fake_server: FakeModelServer,
    start_ink: StartInk,  # noqa: F811
) -> None:
    fake_server.script(call("mcp__h__ask", {}), say("Blue it is."))
    ink = start_ink(config=CONFIG)
    ink.wait_text("MCP servers: h: 12 tools", timeout=60)
    ink.type_line("pick a color")
    ink.wait_text("MCP server h asks: Which color?", timeout=60)
    ink.type_line("/mcp answer colour=blue")  # not a field: refused, the question stays open
    ink.wait_text("the question is still open")
    ink.type_line("/mcp answer color=blue")
    ink.wait_text("Blue it is.", timeout=60)
    result = fake_server.requests[1].tool_results()[-1][1]
    assert json.loads(result) == {"action": "accept", "content": {"color": "blue"}}
    ink.send("/mcp__h__re")  # the palette lists the server's prompts with the commands
    ink.wait_for(lambda: "› /mcp__h__review" in ink.text(), what="the prompt in the menu")
    ink.send(TAB)
    ink.wait_for(lambda: ink.editor_text() == "/mcp__h__review", what="the prompt completed")
    ink.send("\x15")  # Ctrl+U: the editor empty again
    ink.wait_for(lambda: ink.editor_text() == "", what="an empty editor")
    ink.send("see @h:notes://p")  # and its resources with the files
    ink.wait_for(lambda: "› @h:notes://plan" in ink.text(), what="the resource in the menu")
    ink.send(TAB)
    ink.wait_for(lambda: ink.editor_text() == "see @h:notes://plan", what="the resource completed")
