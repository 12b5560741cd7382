"""Writing sessions as things happen: one line per change, appended, never rewritten."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest

from ink.ai.messages import ToolResult, UserMessage
from ink.store import SessionInUse, SessionStore, load_session
from ink.store.entries import encode
from ink.store.writer import SessionWriter
from tests.store.helpers import answer, as_json, calls, conversation, lines, project, result, store


def test_no_file_until_the_first_message_then_header_and_entry(tmp_path: Path) -> None:
    handle = store(tmp_path).create(project(tmp_path), "fake-model", "openai")
    assert not handle.path.exists()
    handle.history.append(UserMessage("hello"))
    header, entry = (json.loads(line) for line in lines(handle.path))
    assert header["type"] == "session" and header["id"] == handle.id
    assert header["cwd"] == str(project(tmp_path).resolve())
    assert (header["model"], header["provider"]) == ("fake-model", "openai")
    assert header["inkVersion"] and header["created"] > 0
    assert entry["type"] == "message" and entry["message"]["text"] == "hello" and entry["timestamp"] > 0
    handle.close()


def test_every_change_is_on_disk_at_once_without_sync_or_close(tmp_path: Path) -> None:
    """R33: the synthetic results of an abort are written when they enter the history, not at run end."""
    handle = store(tmp_path).create(project(tmp_path), "m", "openai")
    messages = conversation()
    for n, message in enumerate(messages, start=2):
        handle.history.append(message)
        assert len(lines(handle.path)) == n  # read by another file object: the bytes are in the file
    assert as_json(load_session(handle.path).messages) == as_json(messages)
    handle.close()


def test_append_to_a_big_file_adds_exactly_one_line_in_place(tmp_path: Path) -> None:
    """O(1) append: same inode, the old bytes untouched, the size grows by exactly the new entry."""
    handle = store(tmp_path).create(project(tmp_path), "m", "openai")
    for i in range(5_000):
        handle.history.append(UserMessage(f"message {i}", timestamp=1.0))
    before = handle.path.stat()
    old_bytes = handle.path.read_bytes()
    message = UserMessage("one more", timestamp=2.0)
    handle.history.append(message)
    after = handle.path.stat()
    new_bytes = handle.path.read_bytes()
    assert after.st_ino == before.st_ino
    assert new_bytes.startswith(old_bytes)
    added = json.loads(new_bytes[len(old_bytes) :])
    assert after.st_size - before.st_size == len(encode(added))
    assert added["message"]["text"] == "one more"
    handle.close()


def test_compaction_is_one_entry_naming_what_it_replaced(tmp_path: Path) -> None:
    handle = store(tmp_path).create(project(tmp_path), "m", "openai")
    old = [
        UserMessage("task"),
        calls("a"),
        result("a"),
        answer("first"),
        UserMessage("next"),
        answer("second"),
    ]
    for message in old:
        handle.history.append(message)
    summary = UserMessage("what happened before", kind="summary")
    handle.history.replace([summary, *old[4:]], "compaction")
    entry = json.loads(lines(handle.path)[-1])
    assert entry["type"] == "compaction" and entry["reason"] == "compaction"
    assert (entry["removed"], entry["kept"]) == (4, 2)
    assert [m["text"] for m in entry["messages"]] == ["what happened before"]
    after = UserMessage("after")
    handle.history.append(after)
    assert as_json(load_session(handle.path).messages) == as_json([summary, *old[4:], after])
    handle.close()


def test_model_change_updates_the_header_before_the_first_entry_then_is_an_entry(tmp_path: Path) -> None:
    handle = store(tmp_path).create(project(tmp_path), "gpt-4.1", "openai")
    handle.record_model_change("gpt-4o", "openai")
    handle.history.append(UserMessage("hi"))
    handle.record_model_change("claude-sonnet-4-5", "anthropic")
    entries = [json.loads(line) for line in lines(handle.path)]
    assert entries[0]["model"] == "gpt-4o"
    assert entries[-1] == {**entries[-1], "type": "model_change", "model": "claude-sonnet-4-5"}
    loaded = load_session(handle.path)
    assert (loaded.model, loaded.provider) == ("claude-sonnet-4-5", "anthropic")
    handle.close()


def test_api_keys_never_reach_the_file(tmp_path: Path) -> None:
    key = "sk-test-0123456789abcdef"
    handle = store(tmp_path, secrets=[key, None, "short"]).create(project(tmp_path), "m", "openai")
    handle.history.append(UserMessage("print the env"))
    handle.history.append(ToolResult("c1", "bash", f"HOME=/root\nOPENAI_API_KEY={key}\nshort=short\n"))
    data = handle.path.read_text()
    assert key not in data
    assert "OPENAI_API_KEY=[REDACTED]" in data
    assert "short=short" in data  # too short to be a key: redacting it would blank ordinary words
    handle.close()


def test_a_failing_disk_is_reported_once_and_never_breaks_the_history(tmp_path: Path) -> None:
    blocker = tmp_path / "sessions"
    blocker.write_text("a file where the session folder should be")
    errors: list[str] = []
    handle = SessionStore(blocker, on_error=errors.append).create(project(tmp_path), "m", "openai")
    handle.history.append(UserMessage("one"))
    handle.history.append(UserMessage("two"))
    assert len(handle.history) == 2
    assert len(errors) == 1 and "could not be written" in errors[0] and str(blocker) in errors[0]
    handle.sync()
    handle.close()


def test_resume_cuts_a_torn_line_before_appending(tmp_path: Path) -> None:
    sessions = store(tmp_path)
    handle = sessions.create(project(tmp_path), "m", "openai")
    handle.history.append(UserMessage("first"))
    handle.close()
    with open(handle.path, "ab") as f:
        f.write(b'{"type":"message","timestamp":1,"message":{"role":"user","te')  # killed mid-write
    resumed = sessions.resume(handle.path)
    assert as_json(resumed.history.messages) == as_json(load_session(handle.path).messages)
    resumed.history.append(UserMessage("second"))
    resumed.close()
    loaded = load_session(handle.path)
    assert [m.text for m in loaded.messages if isinstance(m, UserMessage)] == ["first", "second"]
    assert loaded.torn_bytes == 0
    assert lines(handle.path)[0].startswith(b'{"type":"session"')  # the header is not written twice


def test_undecodable_tool_output_is_written_and_loaded_as_byte_escapes(tmp_path: Path) -> None:
    output = b"caf\xe9 \xff".decode("utf-8", "surrogateescape")  # what a tool gets from a latin-1 file
    handle = store(tmp_path).create(project(tmp_path), "m", "openai")
    handle.history.append(calls("c1"))
    handle.history.append(ToolResult("c1", "bash", output))
    handle.close()
    _, loaded = load_session(handle.path).messages
    assert isinstance(loaded, ToolResult) and loaded.output == "caf\\xe9 \\xff"  # docs/security.md
    assert b"\\ud" not in handle.path.read_bytes()  # no surrogate escape to poison a later request


def test_close_is_idempotent_and_later_changes_are_not_written(tmp_path: Path) -> None:
    handle = store(tmp_path).create(project(tmp_path), "m", "openai")
    handle.history.append(UserMessage("kept"))
    handle.on_event(type("RunEnd", (), {"type": "run_end"})())  # the fsync hook for run_end
    handle.close()
    handle.close()
    handle.history.append(UserMessage("after close"))
    assert len(lines(handle.path)) == 2


def test_writer_attached_to_a_history_with_messages_writes_only_later_ones(tmp_path: Path) -> None:
    from ink.agent.history import History
    from ink.store.entries import SessionHeader

    history = History([UserMessage("already there")])
    path = tmp_path / "s.jsonl"
    writer = SessionWriter(path, SessionHeader("id1", "/x", "m", "openai", "0", 1.0))
    writer.attach(history)
    history.append(UserMessage("new"))
    writer.close()
    assert [json.loads(line)["type"] for line in lines(path)] == ["session", "message"]
    assert os.stat(path).st_mode & 0o777 == 0o600  # sessions may hold private code and output


def test_a_session_has_one_writer_at_a_time(tmp_path: Path) -> None:
    """Two ink processes appending to one file would interleave two histories: the second is refused.
    (The lock dies with its process: test_crash resumes right after kill -9.)"""
    sessions = store(tmp_path)
    first = sessions.create(project(tmp_path), "m", "openai")
    first.history.append(UserMessage("mine"))
    with pytest.raises(SessionInUse, match="open in another ink process"):
        sessions.resume(first.path)
    first.close()
    second = sessions.resume(first.path)
    second.history.append(UserMessage("now mine"))
    second.close()
    assert [m.text for m in load_session(first.path).messages] == ["mine", "now mine"]  # type: ignore[union-attr]


def test_a_complete_last_line_without_its_newline_is_kept_on_load_and_resume(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sessions = store(tmp_path)
    handle = sessions.create(project(tmp_path), "m", "openai")
    handle.history.append(UserMessage("first"))
    handle.history.append(UserMessage("complete but unterminated"))
    handle.close()
    handle.path.write_bytes(handle.path.read_bytes()[:-1])  # an editor, or a crash between line and newline
    loaded = sessions.load(handle.path)
    assert [m.text for m in loaded.messages if isinstance(m, UserMessage)] == [
        "first",
        "complete but unterminated",
    ]
    assert loaded.torn_bytes == 0 and "dropped" not in caplog.text
    resumed = sessions.resume(handle.path)
    resumed.history.append(UserMessage("second"))
    resumed.close()
    texts = [m.text for m in load_session(handle.path).messages if isinstance(m, UserMessage)]
    assert texts == ["first", "complete but unterminated", "second"]
    assert handle.path.read_bytes().endswith(b"\n") and len(lines(handle.path)) == 4


def test_a_dropped_torn_line_is_reported(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    sessions = store(tmp_path)
    handle = sessions.create(project(tmp_path), "m", "openai")
    handle.history.append(UserMessage("first"))
    handle.close()
    with open(handle.path, "ab") as f:
        f.write(b'{"type":"message","timestamp":1,"message":{"role":"user","te')  # killed mid-write
    with caplog.at_level(logging.WARNING):
        sessions.resume(handle.path).close()
    assert f"{handle.path}: dropped an unfinished last line (60 bytes" in caplog.text
