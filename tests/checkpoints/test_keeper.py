"""Checkpoints taken as inputs enter the history, with a real controller, the real bash tool and the fake
model: each run's files are known, a rewind gives the tree back, a resumed session still can (issue 14)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ink.agent.events import InputTaken, TakenInput
from ink.checkpoints import shadow, shadow_repo_for
from ink.checkpoints.keeper import CheckpointLog, Checkpoints
from ink.checkpoints.shadow import TooManyFiles
from ink.tools import ProcessRegistry, default_tools
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
    harness = Harness(fake_server, tools=tools, before_tool=checkpoints.gate(None))
    harness.controller.subscribe(checkpoints.on_event)
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


async def test_a_workspace_with_too_many_files_turns_checkpoints_off_for_the_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ink started in a huge directory (a home folder): one refusal, then no more walks of the tree."""
    monkeypatch.setattr(shadow, "MAX_NEW_FILES", 5)
    work = tmp_path / "work"
    work.mkdir()
    for n in range(8):
        (work / f"f{n}.txt").write_text(f"{n}\n")
    checkpoints = keeper(tmp_path, work)
    with pytest.raises(TooManyFiles, match=r"8 files .* new to the checkpoint store"):
        await checkpoints.repo.snapshot("direct")
    checkpoints.warm()
    checkpoints.on_event(InputTaken("steer", (TakenInput("in-1", "hello"),)))
    await checkpoints.settled()
    assert checkpoints.off and checkpoints.all() == []
    assert not list((tmp_path / "inkhome" / "checkpoints" / "repos").glob("*.git/refs/ink/*"))
    await checkpoints.aclose()
