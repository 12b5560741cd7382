"""Rewind through one method for every frontend: files, conversation or both; a rewind during a run aborts
it first (R17-R23); what the user changed outside ink is named before it is overwritten (issue 14)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ink.checkpoints import shadow_repo_for
from ink.checkpoints.keeper import CheckpointLog, Checkpoints
from ink.rewind import ChangedOutside, Rewinder, RewindError
from ink.run.events import InputRestored
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


@pytest.fixture
async def setup(fake_server: FakeModelServer, tmp_path: Path) -> AsyncIterator[Setup]:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("one\n")
    home = tmp_path / "inkhome"
    checkpoints = Checkpoints(shadow_repo_for(home, work, "s"), CheckpointLog.open(home, "s"))
    tools = [t for t in default_tools(work, ProcessRegistry()) if t.spec.name == "bash"]
    harness = Harness(fake_server, tools=tools, before_tool=(checkpoints.gate,))
    harness.controller.subscribe(checkpoints.on_event)
    harness.controller.changed_files = checkpoints.close_run  # as the app wires it: each run's end fixed
    try:
        yield Setup(work, harness, checkpoints, Rewinder(harness.controller, checkpoints))
    finally:
        await checkpoints.aclose()
        await harness.aclose()


async def two_runs(s: Setup, server: FakeModelServer) -> tuple[str, str]:
    server.script(
        call("bash", {"command": "echo two > a.txt; echo b > b.txt"}),
        say("first done"),
        call("bash", {"command": "rm a.txt; echo c > c.txt"}),
        say("second done"),
    )
    first = s.harness.controller.submit("first").input_id
    await s.harness.settled()
    second = s.harness.controller.submit("second").input_id
    await s.harness.settled()
    await s.checkpoints.settled()  # the end of the run is recorded: what changes now is the user's
    return first, second


async def test_rewinding_both_restores_files_and_hands_back_the_undone_inputs(
    setup: Setup, fake_server: FakeModelServer
) -> None:
    first, second = await two_runs(setup, fake_server)
    result = await setup.rewinder.rewind(second, files=True, conversation=True)
    assert (setup.work / "a.txt").read_text() == "two\n" and not (setup.work / "c.txt").exists()
    assert (setup.work / "b.txt").exists()  # the first run's work stays
    assert [i.text for i in result.restored_input] == ["second"]
    assert setup.harness.user_texts() == ["first"]
    assert any(isinstance(e, InputRestored) for e in setup.harness.events)
    fake_server.script(say("again"))
    assert await setup.harness.next_run_completes()  # the strict server takes the cut history

    await setup.rewinder.rewind(first, files=True, conversation=False)
    assert (setup.work / "a.txt").read_text() == "one\n" and not (setup.work / "b.txt").exists()


async def test_rewinding_only_the_conversation_keeps_the_files(
    setup: Setup, fake_server: FakeModelServer
) -> None:
    first, _ = await two_runs(setup, fake_server)
    await setup.rewinder.rewind(first, files=False, conversation=True)
    assert setup.harness.user_texts() == []
    assert (setup.work / "c.txt").exists() and not (setup.work / "a.txt").exists()


async def test_a_file_changed_by_the_user_is_named_and_kept_unless_forced_and_the_rewind_can_be_undone(
    setup: Setup, fake_server: FakeModelServer
) -> None:
    first, _ = await two_runs(setup, fake_server)
    (setup.work / "c.txt").write_text("the user's own words\n")
    with pytest.raises(ChangedOutside) as refused:
        await setup.rewinder.rewind(first, files=True, conversation=False)
    assert refused.value.paths == ["c.txt"]
    assert (setup.work / "c.txt").read_text() == "the user's own words\n"  # nothing changed
    result = await setup.rewinder.rewind(first, files=True, conversation=False, force=True)
    assert not (setup.work / "c.txt").exists()
    assert result.undo is not None
    undo = setup.checkpoints.get(result.undo)
    assert undo is not None and undo.kind == "rewind" and "c.txt" in undo.files
    with pytest.raises(RewindError, match="files only"):
        await setup.rewinder.rewind(result.undo, files=True, conversation=True)
    await setup.rewinder.rewind(result.undo, files=True, conversation=False)  # undo the rewind
    assert (setup.work / "c.txt").read_text() == "the user's own words\n"
    assert (setup.work / "b.txt").exists()


async def test_a_rewind_during_a_run_aborts_it_cleanly_first(
    setup: Setup, fake_server: FakeModelServer
) -> None:
    marker = setup.work.parent / "started"
    fake_server.script(
        call("bash", {"command": f"echo x > new.txt; touch {marker}; sleep 60"}), say("unused")
    )
    taken = setup.harness.controller.submit("slow work").input_id
    await wait_until(marker.exists, timeout=30, what="the command to start")
    setup.harness.controller.submit("queued steer")
    result = await setup.rewinder.rewind(taken, files=True, conversation=True)
    run_end = setup.harness.run_ends()[-1]
    assert run_end.stop_reason == "aborted" and run_end.receipt is not None and run_end.receipt.interrupted
    assert [i.text for i in run_end.restored_input] == ["queued steer"]  # R22
    assert [i.text for i in result.restored_input] == ["slow work"]
    assert not (setup.work / "new.txt").exists() and not setup.harness.history
    fake_server.script(say("fresh"))
    assert await setup.harness.next_run_completes()


async def test_bad_requests_change_nothing(setup: Setup, fake_server: FakeModelServer) -> None:
    await two_runs(setup, fake_server)
    with pytest.raises(RewindError):
        await setup.rewinder.rewind("no-such-input", files=True, conversation=True)
    with pytest.raises(RewindError):
        await setup.rewinder.rewind("no-such-input", files=False, conversation=True)
    with pytest.raises(RewindError):
        await setup.rewinder.rewind("x", files=False, conversation=False)
    assert setup.harness.user_texts() == ["first", "second"]


async def test_the_receipt_of_an_aborted_run_names_the_files_it_changed(
    setup: Setup, fake_server: FakeModelServer
) -> None:
    """Issue 14: the user knows what a rewind would restore (R34's receipt, plus the files)."""
    marker = setup.work.parent / "started"
    fake_server.script(
        call("bash", {"command": f"echo x > made.txt; rm a.txt; touch {marker}; sleep 60"}), say("unused")
    )
    setup.harness.controller.submit("slow work")
    await wait_until(marker.exists, timeout=30, what="the command to start")
    setup.harness.controller.abort("user")
    await setup.harness.settled()
    receipt = setup.harness.run_ends()[-1].receipt
    assert receipt is not None and receipt.changed_files == ("a.txt", "made.txt")
    assert await setup.checkpoints.changed_outside() == []  # the run's end snapshot was taken once
