"""Finding sessions: per directory, newest first, by id prefix, the latest for --continue."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from ink.ai.messages import UserMessage
from ink.store import AmbiguousSession, NotASession, SessionHandle, SessionNotFound, SessionStore
from ink.store.paths import cwd_folder
from tests.store.helpers import answer, project, store


def session(sessions: SessionStore, cwd: Path, *prompts: str, mtime: float | None = None) -> SessionHandle:
    handle = sessions.create(cwd, "fake-model", "openai")
    for prompt in prompts:
        handle.history.append(UserMessage(prompt))
        handle.history.append(answer())
    handle.close()
    if mtime is not None:
        os.utime(handle.path, (mtime, mtime))
    return handle


def with_id(handle: SessionHandle, new_id: str) -> Path:
    """Rename a session's file to carry ``new_id`` (ids are random; prefix tests need chosen ones)."""
    text = handle.path.read_text().replace(handle.id, new_id, 1)
    path = handle.path.with_name(handle.path.name.replace(handle.id, new_id))
    path.write_text(text)
    handle.path.unlink()
    return path


def test_sessions_of_a_directory_newest_first_with_prompt_and_count(tmp_path: Path) -> None:
    sessions, here, elsewhere = store(tmp_path), project(tmp_path, "here"), project(tmp_path, "there")
    old = session(sessions, here, "first   task\nwith lines", "second", mtime=1_000)
    new = session(sessions, here, "newer task", mtime=2_000)
    session(sessions, elsewhere, "not listed here")
    sessions.create(here, "m", "openai").close()  # nothing typed: no file, not listed
    listed = sessions.sessions(here)
    assert [s.id for s in listed] == [new.id, old.id]
    assert listed[1].first_prompt == "first task with lines"
    assert listed[1].message_count == 4 and listed[0].message_count == 2
    assert listed[0].updated == 2_000 and listed[0].created > 0 and listed[0].cwd == str(here.resolve())
    assert listed[0].model == "fake-model"


def test_the_first_prompt_skips_interruption_markers_and_summaries(tmp_path: Path) -> None:
    sessions, here = store(tmp_path), project(tmp_path)
    handle = sessions.create(here, "m", "openai")
    handle.history.append(UserMessage("summary", kind="summary"))
    handle.history.append(UserMessage("[interrupted by the user]", kind="interruption"))
    handle.history.append(UserMessage("the real prompt"))
    handle.close()
    (info,) = sessions.sessions(here)
    assert info.first_prompt == "the real prompt"


def test_a_torn_last_line_is_not_counted_and_broken_files_are_not_listed(tmp_path: Path) -> None:
    sessions, here = store(tmp_path), project(tmp_path)
    handle = session(sessions, here, "task")
    data = handle.path.read_bytes()
    handle.path.write_bytes(data[:-10])
    (cwd_folder(sessions.session_dir, here) / "junk.jsonl").write_text("not a session\n")
    (info,) = sessions.sessions(here)
    assert info.message_count == 1


def test_latest_is_the_most_recently_updated_session(tmp_path: Path) -> None:
    sessions, here = store(tmp_path), project(tmp_path)
    assert sessions.latest(here) is None
    session(sessions, here, "old", mtime=1_000)
    recent = session(sessions, here, "recent", mtime=2_000)
    latest = sessions.latest(here)
    assert latest is not None and latest.id == recent.id
    resumed = sessions.continue_latest(here)
    assert [m.text for m in resumed.history.messages if isinstance(m, UserMessage)] == ["recent"]
    resumed.close()


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda data: data[:20], "first line is not a session header"),  # killed during its first write
        (lambda data: b"", "the file is empty"),
        (lambda data: b"\xff\xfe not json\n" + data, "first line is not a session header"),
    ],
)
def test_continue_stops_when_the_newest_session_is_unreadable_instead_of_taking_an_older_one(
    tmp_path: Path, damage: Callable[[bytes], bytes], reason: str
) -> None:
    sessions, here = store(tmp_path), project(tmp_path)
    session(sessions, here, "older", mtime=1_000)
    newest = session(sessions, here, "newest", mtime=2_000)
    newest.path.write_bytes(damage(newest.path.read_bytes()))
    os.utime(newest.path, (3_000, 3_000))
    with pytest.raises(NotASession, match=f"{reason}.*nothing was resumed.*ink --resume ID"):
        sessions.continue_latest(here)


def test_continue_without_any_session_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SessionNotFound, match=r"no session to continue in .*`ink sessions`"):
        store(tmp_path).continue_latest(project(tmp_path))


def test_resolve_by_unique_prefix_exact_id_or_path(tmp_path: Path) -> None:
    sessions, here = store(tmp_path), project(tmp_path)
    with_id(session(sessions, here, "one"), "abc111")
    with_id(session(sessions, here, "two"), "abc222")
    with_id(session(sessions, here, "three"), "abc")
    assert sessions.resolve(here, "abc1").id == "abc111"
    assert sessions.resolve(here, "abc").id == "abc"  # an exact id wins over the ids it prefixes
    path = with_id(session(sessions, here, "four"), "fff000")
    assert sessions.resolve(here, str(path)).id == "fff000"


def test_an_ambiguous_prefix_lists_the_candidates(tmp_path: Path) -> None:
    sessions, here = store(tmp_path), project(tmp_path)
    with_id(session(sessions, here, "one"), "abc111")
    with_id(session(sessions, here, "two"), "abc222")
    with pytest.raises(AmbiguousSession) as info:
        sessions.resolve(here, "ab")
    assert info.value.candidates == ("abc111", "abc222")
    assert "abc111, abc222" in str(info.value) and "more characters" in str(info.value)


def test_resolve_looks_in_other_directories_when_this_one_has_no_match(tmp_path: Path) -> None:
    sessions, here, there = store(tmp_path), project(tmp_path, "here"), project(tmp_path, "there")
    with_id(session(sessions, there, "elsewhere"), "beef01")
    info = sessions.resolve(here, "beef")
    assert info.id == "beef01" and info.cwd == str(there.resolve())


def test_an_unknown_prefix_is_a_clear_error(tmp_path: Path) -> None:
    sessions, here = store(tmp_path), project(tmp_path)
    session(sessions, here, "one")
    with pytest.raises(SessionNotFound, match=r"no session id starts with 'zzz'.*`ink sessions`"):
        sessions.resolve(here, "zzz")
    with pytest.raises(SessionNotFound, match="no session id given"):
        sessions.resolve(here, " ")


def test_folders_are_readable_and_distinct_per_directory(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    a = project(tmp_path, "my project")
    b = project(tmp_path, "my-project")  # the same slug as "my project"
    folder_a, folder_b = cwd_folder(root, a), cwd_folder(root, b)
    assert folder_a != folder_b
    assert folder_a.name.rsplit("-", 1)[0].endswith("my-project")
    assert cwd_folder(root, a / ".." / "my project") == folder_a  # the same directory, spelled otherwise
    deep = tmp_path.joinpath(*["very-long-folder-name"] * 10)
    assert len(cwd_folder(root, deep).name) <= 70
