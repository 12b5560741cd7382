"""What the user saves right after a run ends is theirs, not the run's: however soon after ``run_end`` (here:
in the very listener call that delivers it), a rewind names it before it overwrites or deletes it, and so
for a change made between two runs when the rewind goes back past both (R42, issue 29)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from ink.checkpoints import shadow_repo_for
from ink.checkpoints.keeper import CheckpointLog, Checkpoints
from ink.rewind import ChangedOutside, Rewinder
from ink.run.events import RunEnd, RunEvent
from ink.tools import ProcessRegistry, default_tools
from tests.fakeserver import FakeModelServer, call, say
from tests.run.harness import Harness
from tests.waiting import wait_until


@dataclass
class Setup:
    work: Path
    harness: Harness
    checkpoints: Checkpoints
    rewinder: Rewinder

    def at_run_end(self, edit: Callable[[Path], None]) -> None:
        """The user's edit, made the moment the next ``run_end`` reaches a frontend."""

        def listener(event: RunEvent) -> None:
            if isinstance(event, RunEnd):
                remove()
                edit(self.work)

        remove = self.harness.controller.subscribe(listener)


@pytest.fixture
async def setup(fake_server: FakeModelServer, tmp_path: Path) -> AsyncIterator[Setup]:
    work = tmp_path / "work"
    work.mkdir()
    for name in ("a.txt", "keep.txt", "gone.txt"):
        (work / name).write_text(f"{name} before the run\n")
    home = tmp_path / "inkhome"
    checkpoints = Checkpoints(shadow_repo_for(home, work, "s"), CheckpointLog.open(home, "s"))
    tools = [t for t in default_tools(work, ProcessRegistry()) if t.spec.name == "bash"]
    harness = Harness(fake_server, tools=tools, before_tool=(checkpoints.gate,))
    harness.controller.subscribe(checkpoints.on_event)
    harness.controller.changed_files = checkpoints.close_run  # as the app wires it
    try:
        yield Setup(work, harness, checkpoints, Rewinder(harness.controller, checkpoints))
    finally:
        await checkpoints.aclose()
        await harness.aclose()


RUN = "echo by the run > a.txt; rm gone.txt; echo made by the run > made.txt"
EDITS: dict[str, Callable[[Path], None]] = {
    "a file the run did not touch": lambda w: (w / "keep.txt").write_text("the user's\n"),
    "a file the run changed": lambda w: (w / "a.txt").write_text("the user's\n"),
    "a file the run made": lambda w: (w / "made.txt").write_text("the user's\n"),
    "a file the run deleted": lambda w: (w / "gone.txt").write_text("the user's\n"),
    "a new file": lambda w: (w / "mine.txt").write_text("the user's\n"),
}
EDITED = {
    "a file the run did not touch": "keep.txt",
    "a file the run changed": "a.txt",
    "a file the run made": "made.txt",
    "a file the run deleted": "gone.txt",
    "a new file": "mine.txt",
}


@pytest.mark.parametrize("what", list(EDITS))
async def test_an_edit_saved_as_the_run_ends_is_named_and_kept(
    setup: Setup, fake_server: FakeModelServer, what: str
) -> None:
    fake_server.script(call("bash", {"command": RUN}), say("done"))
    setup.at_run_end(EDITS[what])
    taken = setup.harness.controller.submit("work").input_id
    await setup.harness.settled()
    await setup.checkpoints.settled()
    name = EDITED[what]
    with pytest.raises(ChangedOutside) as refused:
        await setup.rewinder.rewind(taken, files=True, conversation=False)
    assert name in refused.value.paths
    assert (setup.work / name).read_text() == "the user's\n"  # nothing changed
    checkpoint = setup.checkpoints.get(taken)
    assert checkpoint is not None and set(checkpoint.files) >= {"a.txt", "gone.txt", "made.txt"}


async def test_an_edit_saved_as_an_aborted_run_ends_is_named_and_kept(
    setup: Setup, fake_server: FakeModelServer
) -> None:
    marker = setup.work.parent / "started"
    fake_server.script(call("bash", {"command": f"{RUN}; touch {marker}; sleep 60"}), say("unused"))
    setup.at_run_end(EDITS["a file the run changed"])
    taken = setup.harness.controller.submit("slow work").input_id
    await wait_until(marker.exists, timeout=30, what="the command to start")
    setup.harness.controller.abort("user")
    await setup.harness.settled()
    receipt = setup.harness.run_ends()[-1].receipt
    assert receipt is not None and receipt.changed_files == ("a.txt", "gone.txt", "made.txt")
    await setup.checkpoints.settled()
    with pytest.raises(ChangedOutside) as refused:
        await setup.rewinder.rewind(taken, files=True, conversation=False)
    assert refused.value.paths == ["a.txt"]
    assert (setup.work / "a.txt").read_text() == "the user's\n"


async def test_without_an_edit_a_rewind_asks_nothing(setup: Setup, fake_server: FakeModelServer) -> None:
    """The run's own writes, however many and however late in the run, are never taken for the user's."""
    fake_server.script(
        call("bash", {"command": RUN + "; for i in $(seq 300); do echo $i > f$i.txt; done"}), say("ok")
    )
    taken = setup.harness.controller.submit("work").input_id
    await setup.harness.settled()
    await setup.checkpoints.settled()
    result = await setup.rewinder.rewind(taken, files=True, conversation=False)
    assert (setup.work / "a.txt").read_text() == "a.txt before the run\n"
    assert len(result.removed) == 301 and not (setup.work / "f1.txt").exists()


async def test_a_change_made_between_two_runs_is_named_by_a_rewind_past_both(
    setup: Setup, fake_server: FakeModelServer
) -> None:
    fake_server.script(
        call("bash", {"command": "echo one > a.txt"}),
        say("first done"),
        call("bash", {"command": "echo two > made.txt"}),
        say("second done"),
    )
    first = setup.harness.controller.submit("first").input_id
    await setup.harness.settled()
    await setup.checkpoints.settled()
    (setup.work / "keep.txt").write_text("the user's, between the runs\n")
    second = setup.harness.controller.submit("second").input_id
    await setup.harness.settled()
    await setup.checkpoints.settled()
    await setup.rewinder.rewind(second, files=True, conversation=False)  # the user's change is before it
    assert not (setup.work / "made.txt").exists()
    with pytest.raises(ChangedOutside) as refused:
        await setup.rewinder.rewind(first, files=True, conversation=False)
    assert refused.value.paths == ["keep.txt"]
    assert (setup.work / "keep.txt").read_text() == "the user's, between the runs\n"
    await setup.rewinder.rewind(first, files=True, conversation=False, force=True)
    assert (setup.work / "keep.txt").read_text() == "keep.txt before the run\n"
