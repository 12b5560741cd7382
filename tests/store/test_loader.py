"""Loading sessions: replay, torn lines, damage, and the repair of dangling tool calls (R19, R33)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ink.ai.messages import AssistantMessage, ToolResult, Usage, UserMessage, message_to_json
from ink.store import CorruptSession, NotASession, SessionNotFound, load_session, repair_tool_calls
from ink.store.loader import SESSION_ENDED
from tests.store.helpers import (
    answer,
    as_json,
    calls,
    conversation,
    lines,
    project,
    result,
    store,
    strict_errors,
)


def write_session(tmp_path: Path, messages: list) -> Path:  # type: ignore[type-arg]
    handle = store(tmp_path).create(project(tmp_path), "fake-model", "openai")
    for message in messages:
        handle.history.append(message)
    handle.close()
    return handle.path


def test_round_trip_of_every_kind_of_message(tmp_path: Path) -> None:
    messages = conversation()
    loaded = load_session(write_session(tmp_path, messages))
    assert as_json(loaded.messages) == as_json(messages)
    assert loaded.message_entries == len(messages)
    assert loaded.usage == Usage(60, 10, 2, 1, cost_usd=None)  # fake-model: prices unknown
    assert not loaded.repair and loaded.torn_bytes == 0


def test_a_torn_last_line_is_ignored(tmp_path: Path) -> None:
    messages = [UserMessage("task"), answer()]
    path = write_session(tmp_path, messages)
    data = path.read_bytes()
    path.write_bytes(data[:-15])  # the process died while writing the last line
    loaded = load_session(path)
    assert as_json(loaded.messages) == as_json(messages[:1])
    assert loaded.torn_bytes == len(data.splitlines()[-1]) - 14


def test_a_damaged_middle_line_names_file_and_line_and_changes_nothing(tmp_path: Path) -> None:
    path = write_session(tmp_path, [UserMessage("one"), UserMessage("two"), UserMessage("three")])
    original = lines(path)
    original[2] = original[2][:30]  # a torn write that a later append glued a line to
    path.write_bytes(b"\n".join(original) + b"\n")
    before = path.read_bytes()
    with pytest.raises(CorruptSession) as info:
        load_session(path)
    assert f"{path}:3:" in str(info.value) and "invalid JSON" in str(info.value)
    assert info.value.line == 3
    assert path.read_bytes() == before


def test_an_invalid_message_in_a_valid_line_is_damage_too(tmp_path: Path) -> None:
    path = write_session(tmp_path, [UserMessage("one")])
    with open(path, "ab") as f:
        f.write(b'{"type":"message","timestamp":1,"message":{"role":"robot"}}\n')
    with pytest.raises(CorruptSession, match=r":3: .*unknown message role 'robot'"):
        load_session(path)


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", "empty file"),
        (b'{"type":"sess', "no complete first line"),
        (b"# my notes\nhello\n", "invalid JSON"),
        (b'{"role":"user","text":"hi"}\n', "not an entry object"),
        (b'{"type":"message","message":{}}\n', "not a session header"),
    ],
)
def test_a_file_that_is_not_a_session_says_so(tmp_path: Path, content: bytes, reason: str) -> None:
    path = tmp_path / "notes.jsonl"
    path.write_bytes(content)
    with pytest.raises(NotASession, match=reason) as info:
        load_session(path)
    assert str(path) in str(info.value) and "not an ink session file" in str(info.value)


def test_a_missing_file_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(SessionNotFound, match="no such session file"):
        load_session(tmp_path / "gone.jsonl")


def test_unknown_entry_types_from_a_newer_ink_are_skipped(tmp_path: Path) -> None:
    path = write_session(tmp_path, [UserMessage("one")])
    with open(path, "ab") as f:
        f.write(b'{"type":"bookmark","timestamp":5,"label":"x"}\n')
    assert [m.text for m in load_session(path).messages if isinstance(m, UserMessage)] == ["one"]


# -- dangling tool calls (R19) -------------------------------------------------------------------


def test_killed_during_a_batch_repairs_the_missing_results_after_the_existing_ones(tmp_path: Path) -> None:
    """kill -9 after the first of three results: the other two get synthetic results, in call order,
    right after the existing one, and both strict APIs accept the history."""
    written = [UserMessage("read three files"), calls("a", "b", "c"), result("a")]
    assert all(strict_errors(written))  # without repair both services would answer 400
    loaded = load_session(write_session(tmp_path, written))
    assert [type(m).__name__ for m in loaded.messages] == [
        "UserMessage",
        "AssistantMessage",
        "ToolResult",
        "ToolResult",
        "ToolResult",
    ]
    ids = [(m.tool_call_id, m.output == SESSION_ENDED) for m in loaded.messages if isinstance(m, ToolResult)]
    assert ids == [("a", False), ("b", True), ("c", True)]
    assert [r.tool_call_id for r in loaded.repair.inserted] == ["b", "c"] and loaded.repair.at_tail
    assert strict_errors(loaded.messages) == [None, None]
    assert all(r.is_error for r in loaded.repair.inserted)


def test_resume_writes_the_repair_so_the_file_itself_is_valid_again(tmp_path: Path) -> None:
    """R33: synthetic results belong to the session file, not only to request-time repair."""
    path = write_session(tmp_path, [UserMessage("go"), calls("a")])
    handle = store(tmp_path).resume(path)
    handle.history.append(UserMessage("and now?"))
    handle.close()
    loaded = load_session(path)
    assert not loaded.repair
    assert [type(m).__name__ for m in loaded.messages] == [
        "UserMessage",
        "AssistantMessage",
        "ToolResult",
        "UserMessage",
    ]
    assert strict_errors(loaded.messages) == [None, None]


def test_a_dangling_call_in_the_middle_gets_its_result_before_the_next_message() -> None:
    messages = [UserMessage("one"), calls("a", "b"), result("b"), UserMessage("two"), answer()]
    repaired, inserted, dropped = repair_tool_calls(messages)
    assert [getattr(m, "tool_call_id", type(m).__name__) for m in repaired] == [
        "UserMessage",
        "AssistantMessage",
        "b",
        "a",
        "UserMessage",
        "AssistantMessage",
    ]
    assert [r.tool_call_id for r in inserted] == ["a"] and not dropped
    assert strict_errors(repaired) == [None, None]


def test_orphan_and_duplicate_results_are_dropped() -> None:
    messages = [UserMessage("one"), result("ghost"), calls("a"), result("a"), result("a"), answer()]
    repaired, inserted, dropped = repair_tool_calls(messages)
    assert [r.tool_call_id for r in dropped] == ["ghost", "a"] and not inserted
    assert strict_errors(repaired) == [None, None]


def test_compaction_entries_replay_into_the_compacted_history(tmp_path: Path) -> None:
    sessions = store(tmp_path)
    handle = sessions.create(project(tmp_path), "m", "openai")
    first = [UserMessage("task"), calls("a"), result("a"), answer("first part")]
    for message in first:
        handle.history.append(message)
    summary = UserMessage("summary one", kind="summary")
    handle.history.replace([summary, first[-1]], "compaction")
    later = [UserMessage("more"), calls("b"), result("b", "x" * 50)]
    for message in later:
        handle.history.append(message)
    shortened = ToolResult("b", "read", "x…", duration_ms=3)
    handle.history.replace([summary, first[-1], *later[:2], shortened], "truncation")
    handle.close()
    loaded = load_session(handle.path)
    assert as_json(loaded.messages) == as_json([summary, first[-1], *later[:2], shortened])
    assert loaded.message_entries == len(first) + len(later)
    assert loaded.usage == Usage(
        250, 45, 10, 2, cost_usd=None
    )  # compacted replies still count for the session


def test_a_compaction_that_does_not_fit_the_history_before_it_is_damage(tmp_path: Path) -> None:
    path = write_session(tmp_path, [UserMessage("one")])
    entry = {"type": "compaction", "timestamp": 2, "reason": "compaction", "removed": 3, "kept": 0}
    entry["messages"] = [message_to_json(UserMessage("s", kind="summary"))]
    with open(path, "a") as f:
        f.write(json.dumps(entry) + "\n")
    with pytest.raises(
        CorruptSession, match=r":3: .*compaction entry replaces 3 and keeps 0 messages, but 1 precede"
    ):
        load_session(path)


def test_an_aborted_reply_with_only_its_complete_calls_loads_valid(tmp_path: Path) -> None:
    """What the loop writes at abort (R19): the partial reply, "not executed" results, the marker."""
    partial = AssistantMessage(calls("a").content, "aborted", model="fake-model")
    written = [
        UserMessage("go"),
        partial,
        ToolResult("a", "read", "Not executed: cancelled by the user before it started.", is_error=True),
        UserMessage("[interrupted by the user]", kind="interruption"),
    ]
    loaded = load_session(write_session(tmp_path, written))
    assert as_json(loaded.messages) == as_json(written) and not loaded.repair
    assert strict_errors([*loaded.messages, UserMessage("next")]) == [None, None]


def test_the_session_cost_so_far_is_known_only_when_every_model_price_is(tmp_path: Path) -> None:
    priced = AssistantMessage(answer().content, "stop", model="gpt-4.1", usage=Usage(1_000_000, 0))
    assert load_session(write_session(tmp_path / "a", [UserMessage("q"), priced])).cost == 2.0
    unpriced = answer()  # "fake-model": no prices
    assert load_session(write_session(tmp_path / "b", [UserMessage("q"), priced, unpriced])).cost is None
