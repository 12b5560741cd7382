"""The pure pieces of the ACP frontend: prompt text, turn bookkeeping, line splitting, titles, encoding."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ink.ai.messages import ToolResult
from ink.frontends.acp.jsonrpc import Call, Reply, RpcError, encode_message, parse_message
from ink.frontends.acp.prompt import InvalidPrompt, prompt_text
from ink.frontends.acp.session import decision
from ink.frontends.acp.turns import Answer, PromptTurns
from ink.frontends.acp.updates import tool_call, tool_result
from ink.frontends.stdio import LineSplitter, Overlong
from ink.tools import ProcessRegistry, default_tools


def test_prompt_text_joins_text_and_links_in_place() -> None:
    blocks = [
        {"type": "text", "text": "look at "},
        {"type": "resource_link", "uri": "file:///src/a%20b.py", "name": "a b.py"},
        {"type": "text", "text": " and "},
        {"type": "resource_link", "uri": "https://example.invalid/x", "name": "x"},
    ]
    assert prompt_text(blocks) == "look at [a b.py](/src/a b.py) and [x](https://example.invalid/x)"


def test_prompt_text_appends_embedded_text_as_context() -> None:
    blocks = [{"type": "resource", "resource": {"uri": "file:///p/m.py", "text": "print(1)"}}]
    assert prompt_text(blocks) == '[m.py](/p/m.py)\n\n<context ref="file:///p/m.py">\nprint(1)\n</context>'


@pytest.mark.parametrize(
    "blocks",
    [None, [], [{"type": "text", "text": " "}], [{"type": "image", "data": ""}], [{"type": "resource"}], [3]],
)
def test_prompt_text_refuses_what_it_cannot_use(blocks: object) -> None:
    with pytest.raises(InvalidPrompt):
        prompt_text(blocks)


def test_turns_a_follow_up_ends_the_turns_before_it_and_the_run_end_the_rest() -> None:
    turns = PromptTurns()
    turns.submitted("in-1", 1)
    turns.submitted("in-2", 2)
    assert turns.taken("steer", ["in-1"], "end_turn") == []
    assert turns.taken("follow_up", ["in-2"], "max_tokens") == [Answer(1, "max_tokens")]
    assert turns.run_ended("completed", [], "end_turn") == [Answer(2, "end_turn")]
    assert len(turns) == 0


def test_turns_a_queued_prompt_waits_for_the_flush_after_a_normal_end() -> None:
    turns = PromptTurns()
    turns.submitted("in-1", 1)
    turns.submitted("in-2", 2)
    turns.taken("steer", ["in-1"], "end_turn")
    assert turns.run_ended("max_iterations", [], "end_turn") == [Answer(1, "max_turn_requests")]
    turns.taken("follow_up", ["in-2"], "end_turn")  # the flush's new run: nothing active before it
    assert turns.run_ended("completed", [], "end_turn") == [Answer(2, "end_turn")]


def test_turns_abort_and_error_answer_every_prompt_once() -> None:
    turns = PromptTurns()
    for n in (1, 2, 3):
        turns.submitted(f"in-{n}", n)
    turns.taken("steer", ["in-1"], "end_turn")
    assert turns.run_ended("aborted", ["in-2"], "end_turn") == [
        Answer(2, "cancelled"),
        Answer(1, "cancelled"),
    ]
    turns.taken("steer", ["in-3"], "end_turn")
    assert turns.run_ended("error", [], "end_turn", "boom") == [Answer(3, None, "boom")]
    assert turns.drain() == [] and turns.run_ended("completed", ["in-1"], "end_turn") == []


def test_turns_bang_lines_and_drain() -> None:
    turns = PromptTurns()
    turns.submitted("in-1", "a")
    turns.submitted("in-2", "b")
    assert turns.bang_ended("in-1", interrupted=True) == [Answer("a", "cancelled")]
    assert turns.drain() == [Answer("b", "cancelled")]


def test_line_splitter_drops_an_overlong_line_and_reads_on() -> None:
    splitter = LineSplitter(limit=8)
    out = [*splitter.feed(b"short\n0123456789"), *splitter.feed(b"abc\nnext\nta"), *splitter.finish()]
    assert out == [b"short", Overlong(10, b"0123456789"), b"next", b"ta"]


def test_encode_message_is_always_valid_utf8_json() -> None:
    line = encode_message({"text": "a\ud800b", "n": float("nan"), "ok": "é"})
    assert json.loads(line) == {"text": "a?b", "n": None, "ok": "é"}


def test_parse_message_sorts_calls_replies_and_errors() -> None:
    assert parse_message(b'{"jsonrpc":"2.0","id":1,"method":"m"}') == Call("m", {}, 1)
    assert parse_message(b'{"jsonrpc":"2.0","method":"n","params":null}') == Call("n", {}, None, True)
    assert parse_message(b'{"jsonrpc":"2.0","id":"x","result":null}') == Reply("x", None)
    with pytest.raises(RpcError) as caught:
        parse_message(b'{"jsonrpc":"2.0","method":"n","params":[1]}')
    assert caught.value.code == -32602 and caught.value.notification
    with pytest.raises(RpcError) as caught:
        parse_message(b'{"jsonrpc":"2.0","id":true,"method":"m"}')
    assert caught.value.code == -32600


def test_titles_kinds_and_locations_come_from_the_tool(tmp_path: Path) -> None:
    tools = {t.spec.name: t for t in default_tools(tmp_path, ProcessRegistry())}

    def shown(name: str, args: dict[str, object]) -> dict[str, object]:
        return tool_call("c", name, args, tools.get(name))

    assert shown("bash", {"command": "npm test\nnpm run lint"})["title"] == "bash npm test…"
    read = shown("read", {"path": "a.py", "offset": 40})
    assert read["title"] == "read a.py (from line 40)" and read["kind"] == "read"
    assert read["locations"] == [{"path": str(tmp_path / "a.py"), "line": 40}]
    grep = shown("grep", {"pattern": "TODO", "path": "src"})
    assert grep["title"] == "grep TODO in src" and grep["kind"] == "search"
    mystery = shown("mystery", {})
    assert mystery["title"] == "mystery" and mystery["kind"] == "other" and "locations" not in mystery


def test_a_tool_result_is_fenced_only_where_it_is_verbatim_output() -> None:
    shown = tool_result(ToolResult("c", "bash", "has ``` inside\n"), "execute")["content"][0]["content"][
        "text"
    ]
    assert shown == "````\nhas ``` inside\n````"
    failed = tool_result(ToolResult("c", "bash", "exit 1", is_error=True), "execute", [{"type": "diff"}])
    assert failed["status"] == "failed" and failed["content"] == [
        {"type": "content", "content": {"type": "text", "text": "exit 1"}}
    ]


def test_permission_decision_picks_the_option_or_denies() -> None:
    assert decision({"outcome": {"outcome": "selected", "optionId": "always"}}) == "always"
    assert decision({"outcome": {"outcome": "selected", "optionId": "maybe"}}) == "deny"
    assert decision({"outcome": {"outcome": "cancelled"}}) == "deny"
    assert decision(None) == "deny"


def test_write_shows_the_file_it_replaces(tmp_path: Path) -> None:
    write = next(t for t in default_tools(tmp_path, ProcessRegistry()) if t.spec.name == "write")
    (tmp_path / "f.txt").write_text("old\n")
    update = tool_call("w", "write", {"path": "f.txt", "content": "new\n"}, write)
    assert update["content"] == [
        {"type": "diff", "path": str(tmp_path / "f.txt"), "oldText": "old\n", "newText": "new\n"}
    ]
    fresh = tool_call("w", "write", {"path": "g.txt", "content": "x"}, write)
    assert fresh["content"][0]["oldText"] is None and fresh["kind"] == "edit"


def test_json_nested_too_deep_for_the_parser_is_a_parse_error_not_a_crash() -> None:
    with pytest.raises(RpcError, match="Parse error"):
        parse_message(b"[" * 100_000)


def test_live_output_is_the_calls_content_until_its_result() -> None:
    from ink.frontends.acp.updates import live_output

    assert live_output("c", "building…\n") == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c",
        "content": [{"type": "content", "content": {"type": "text", "text": "```\nbuilding…\n```"}}],
    }


def test_a_line_naming_a_key_twice_that_cannot_be_read_otherwise_is_one_refusal() -> None:
    """As in RPC (tests/rpc/test_permission_answers.py): what follows the object naming a key twice is not
    JSON, or nests too deep; the line is an invalid request, never an error out of the reader."""
    from ink.frontends.acp.jsonrpc import RpcError, parse_message
    from tests.rpc.test_permission_answers import UNREADABLE_AFTER_A_TWICE_NAMED_KEY

    for line in UNREADABLE_AFTER_A_TWICE_NAMED_KEY:
        try:
            parse_message(line)
        except RpcError as exc:
            assert "appears twice" in exc.message
        else:
            raise AssertionError("a line naming a key twice was read as a message")
