"""Checkpoints taken as inputs enter the history, with a real controller, the real bash tool and the fake
model: each run's files are known, a rewind gives the tree back, a resumed session still can (issue 14)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from ink.agent.events import InputTaken, Notice, TakenInput
from ink.agent.tasks import Tasks
from ink.checkpoints import shadow, shadow_repo_for
from ink.checkpoints.keeper import CheckpointLog, Checkpoints
from ink.checkpoints.shadow import TooManyFiles
from ink.rewind import SessionCheckpoints
from ink.tools import ProcessRegistry, default_tools
from tests.checkpoints.test_limits import heavy
from tests.fakeserver import FakeModelServer, call, say
from tests.run.harness import Harness


def keeper(tmp_path: Path, work: Path, session: str = "s1") -> Checkpoints:
    home = tmp_path / "inkhome"
    return Checkpoints(shadow_repo_for(home, work, session), CheckpointLog.open(home, session))


async def test_each_input_gets_a_checkpoint_and_a_rewind_restores_the_tree(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "keep.txt").write_text("original\n")
    (work / "gone.txt").write_text("doomed\n")
    checkpoints = keeper(tmp_path, work)
    registry = ProcessRegistry()
    tools = [t for t in default_tools(work, registry) if t.spec.name == "bash"]
    harness = Harness(fake_server, tools=tools, before_tool=(checkpoints.gate,))
    harness.controller.subscribe(checkpoints.on_event)
    harness.controller.changed_files = checkpoints.close_run  # as the app wires it: each run's end fixed
    fake_server.script(
        call("bash", {"command": "echo edited > keep.txt; rm gone.txt; echo new > new.txt"}),
        say("done"),
        call("bash", {"command": "echo second > second.txt"}),
        say("done again"),
    )
    try:
        harness.controller.submit("first task")
        await harness.settled()
        harness.controller.submit("second task")
        await harness.settled()
        await checkpoints.settled()
        first, second = checkpoints.all()
        assert (first.text, second.text) == ("first task", "second task")
        assert set(first.files) == {"gone.txt", "keep.txt", "new.txt"}
        assert second.files == ("second.txt",)
        assert await checkpoints.changed_outside() == []
        (work / "keep.txt").write_text("the user's own edit\n")
        assert await checkpoints.changed_outside() == ["keep.txt"]

        report = await checkpoints.restore(first.input_id)
        assert (work / "keep.txt").read_text() == "original\n"
        assert (work / "gone.txt").read_text() == "doomed\n"
        assert not (work / "new.txt").exists() and not (work / "second.txt").exists()
        assert set(report.removed) == {"new.txt", "second.txt"}

        resumed = keeper(tmp_path, work)  # a later process, the same session
        *inputs, undo = resumed.all()
        assert [c.input_id for c in inputs] == [first.input_id, second.input_id]
        assert resumed.get(first.input_id) == checkpoints.get(first.input_id)
        assert undo.kind == "rewind" and set(undo.files) == {"gone.txt", "keep.txt", "new.txt", "second.txt"}
        (work / "keep.txt").write_text("changed after the restart\n")
        assert await resumed.changed_outside() == ["keep.txt"]  # the restore's end was recorded
    finally:
        await checkpoints.aclose()
        await harness.aclose()


def crowded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace of 8 files, with the limit of files new to the store lowered to 5."""
    monkeypatch.setattr(shadow, "MAX_NEW_FILES", 5)
    work = tmp_path / "work"
    work.mkdir()
    for n in range(8):
        (work / f"f{n}.txt").write_text(f"{n}\n")
    return work


async def test_a_workspace_with_too_many_files_turns_checkpoints_off_for_the_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ink started in a huge directory (a home folder): one refusal, then no more walks of the tree."""
    work = crowded(tmp_path, monkeypatch)
    checkpoints = keeper(tmp_path, work)
    told: list[str] = []
    checkpoints.notify = told.append
    with pytest.raises(TooManyFiles, match=r"8 files .* new to the checkpoint store"):
        await checkpoints.repo.snapshot("direct")
    checkpoints.warm()
    checkpoints.on_event(InputTaken("steer", (TakenInput("in-1", "hello"),)))
    checkpoints.on_event(InputTaken("steer", (TakenInput("in-2", "again"),)))
    await checkpoints.settled()
    assert checkpoints.off and checkpoints.all() == []
    assert len(told) == 1 and "checkpoints are off for this session" in told[0]  # told once
    assert not list((tmp_path / "inkhome" / "checkpoints" / "repos").glob("*.git/refs/ink/*"))
    await checkpoints.aclose()


@pytest.mark.parametrize(("workspace", "said"), [(crowded, "8 files"), (heavy, "2.5 MiB")])
async def test_the_user_is_told_through_a_notice_event_when_checkpoints_go_off(
    fake_server: FakeModelServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    workspace: Callable[[Path, pytest.MonkeyPatch], Path],
    said: str,
) -> None:
    """Every frontend shows ``notice`` events: the switch-off reaches the user wherever ink runs, once,
    for too many files as for too many bytes (the byte budget, issue 29)."""
    work = workspace(tmp_path, monkeypatch)
    harness = Harness(fake_server)
    notices: list[Notice] = []
    harness.controller.subscribe(lambda e: notices.append(e) if isinstance(e, Notice) else None)
    part = SessionCheckpoints(harness.controller.emit, Tasks(), tmp_path / "inkhome", work)
    part.open("s1")
    try:
        part.on_event(InputTaken("steer", (TakenInput("in-1", "hello"),)))
        await part.settled()
        assert [(n.level, "checkpoints are off" in n.text, said in n.text) for n in notices] == [
            ("warning", True, True)
        ]
        assert part.checkpoints() == []
    finally:
        await part.aclose()
        await harness.aclose()


async def test_a_session_that_is_not_saved_leaves_no_record_and_one_index_behind(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    """``--no-session``: the checkpoints live in memory (a rewind works while ink runs), no record file
    is written, and the session's index ends as the store's single ``index-unsaved``."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("one\n")
    home = tmp_path / "inkhome"
    for _ in range(2):
        harness = Harness(fake_server)
        part = SessionCheckpoints(harness.controller.emit, Tasks(), home, work)
        part.open(None)
        part.on_event(InputTaken("steer", (TakenInput("in-1", "hello"),)))
        await part.settled()
        (work / "a.txt").write_text("two\n")
        assert part.current is not None
        await part.current.restore("in-1")
        assert (work / "a.txt").read_text() == "one\n"
        await part.aclose()
        await harness.aclose()
    assert not (home / "checkpoints" / "sessions").exists()
    (store,) = (home / "checkpoints" / "repos").glob("*.git")
    assert sorted(p.name for p in store.glob("index-*")) == ["index-unsaved"]
    assert not list(store.glob("large-*"))


async def test_a_run_ends_at_once_in_a_session_whose_checkpoints_went_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The end of a run is fixed before its run_end (``close_run``): with checkpoints off there is
    nothing to fix, and the answer must not wait for a snapshot that will never be taken (the receipt's
    5 s bound held every run_end)."""
    work = crowded(tmp_path, monkeypatch)
    checkpoints = keeper(tmp_path, work)
    checkpoints.on_event(InputTaken("steer", (TakenInput("in-1", "hello"),)))
    await checkpoints.passing()  # a bash call: the run may have changed files
    assert checkpoints.off
    closing = asyncio.ensure_future(checkpoints.close_run("run-1"))
    for _ in range(100):  # loop turns, not time: nothing is left to wait for
        if closing.done():
            break
        await asyncio.sleep(0)
    assert closing.done() and closing.result() is None
    await checkpoints.aclose()
