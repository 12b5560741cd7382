"""The first input of a session does not wait for more than the session-open snapshot: an input taken
while that snapshot runs adopts it as its checkpoint, and only calls that may change files wait for it
at all. The guarantee stays: no tool changes a file before the checkpoint that holds it exists, and a
rewind gives the tree back byte for byte (issue 14)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from pathlib import Path

from ink.agent.abort import AbortSignal
from ink.agent.events import InputTaken, TakenInput
from ink.agent.tasks import Tasks
from ink.agent.tool import Refusal, ToolCallContext
from ink.ai.messages import ToolCall
from ink.checkpoints.keeper import CheckpointLog, Checkpoints
from ink.checkpoints.shadow import ShadowRepo, Snapshot, ink_folders
from ink.rewind import SessionCheckpoints
from ink.run.events import BangStart
from ink.tools import ProcessRegistry, default_tools
from tests.checkpoints.test_shadow import manifest, project
from tests.fakeserver import FakeModelServer
from tests.run.harness import Harness


class HeldRepo(ShadowRepo):
    """The real store, but the session-open snapshot holds at its start until ``release`` (so an input
    is taken while it runs, whatever the machine's speed). Records the refs it snapshots."""

    def __init__(self, tmp_path: Path, work: Path) -> None:
        home = tmp_path / "inkhome"
        super().__init__(home / "checkpoints" / "repos" / "w.git", work, "s1", ink_folders(home, work))
        self.release = asyncio.Event()
        self.refs: list[str] = []

    async def snapshot(self, ref: str) -> Snapshot:
        self.refs.append(ref.split("/")[0])
        if ref.startswith("open/"):
            await self.release.wait()
        return await super().snapshot(ref)


def keeper(tmp_path: Path) -> tuple[Checkpoints, HeldRepo, Path]:
    work = project(tmp_path / "work")
    repo = HeldRepo(tmp_path, work)
    return Checkpoints(repo, CheckpointLog.open(tmp_path / "inkhome", "s1")), repo, work


def taken(input_id: str) -> InputTaken:
    return InputTaken("steer", (TakenInput(input_id, "hello"),))


async def test_an_input_taken_during_the_session_open_snapshot_adopts_it(tmp_path: Path) -> None:
    checkpoints, repo, work = keeper(tmp_path)
    before = manifest(work)
    checkpoints.warm()
    checkpoints.on_event(taken("in-1"))
    repo.release.set()
    await checkpoints.settled()
    assert repo.refs == ["open"]  # one snapshot: the input's checkpoint is the session-open one
    (work / "src" / "app.py").write_text("changed\n")
    (work / "run.sh").unlink()
    (work / "made.txt").write_text("new\n")
    await checkpoints.restore("in-1")
    assert manifest(work) == before
    await checkpoints.aclose()


async def test_a_bang_command_or_a_finished_snapshot_means_a_checkpoint_of_the_inputs_own(
    tmp_path: Path,
) -> None:
    """A ``!`` command may change files while the session-open snapshot reads them; once that snapshot
    is done, the user may have changed files while typing: either way the input gets a snapshot of its
    own, and a rewind keeps what was there when the input was taken."""
    checkpoints, repo, work = keeper(tmp_path)
    checkpoints.warm()
    checkpoints.on_event(BangStart("touch bang.txt"))
    checkpoints.on_event(taken("in-1"))
    repo.release.set()
    await checkpoints.settled()
    assert repo.refs == ["open", "input"]
    (work / "typed.txt").write_text("the user's, before the second input\n")
    checkpoints.on_event(taken("in-2"))
    await checkpoints.settled()
    assert repo.refs == ["open", "input", "input"]
    (work / "typed.txt").unlink()
    await checkpoints.restore("in-2")
    assert (work / "typed.txt").read_text() == "the user's, before the second input\n"
    await checkpoints.aclose()


async def test_only_calls_that_may_change_files_wait_for_the_pending_checkpoint(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    """A read or a search starts at once; bash (and an edit, any other tool) waits until the checkpoint
    holding the workspace before them is taken."""
    work = project(tmp_path / "work")
    harness = Harness(fake_server, tools=default_tools(work, ProcessRegistry()))
    part = SessionCheckpoints(harness.controller.emit, Tasks(), tmp_path / "inkhome", work)
    repo = HeldRepo(tmp_path, work)
    part.current = Checkpoints(repo, CheckpointLog.open(tmp_path / "inkhome", "s1"))
    part.current.warm()
    part.current.on_event(taken("in-1"))
    signal = AbortSignal()
    setup = harness.controller.setup

    def gate(call: ToolCall) -> Awaitable[Refusal | None]:
        return part.gate(ToolCallContext(call, signal, setup))

    try:
        bash = asyncio.ensure_future(gate(ToolCall("c1", "bash", {"command": "rm run.sh"})))
        reads = gate(ToolCall("c2", "read", {"path": "run.sh"}))
        await asyncio.wait_for(reads, 30)  # a failure here, not a hang, if reads waited for the snapshot
        await asyncio.wait_for(gate(ToolCall("c3", "grep", {"pattern": "x"})), 30)
        assert not bash.done()  # the snapshot is held: the bash call cannot have passed the gate
        repo.release.set()
        await bash
        checkpoint = part.current.get("in-1")
        assert checkpoint is not None and checkpoint.commit
    finally:
        repo.release.set()
        await part.aclose()
        await harness.aclose()


async def test_an_abort_while_a_call_waits_for_its_checkpoint_refuses_the_call_at_once(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    """R17, R34: the wait is for a snapshot that may be slow or blocked (git opening a FIFO named
    ``.gitignore`` waits for a writer until its 300 s timeout, and a SIGTERM went unanswered all that
    time): an abort does not wait for it. The call is refused as never started; the snapshot goes on."""
    work = project(tmp_path / "work")
    harness = Harness(fake_server, tools=default_tools(work, ProcessRegistry()))
    part = SessionCheckpoints(harness.controller.emit, Tasks(), tmp_path / "inkhome", work)
    repo = HeldRepo(tmp_path, work)
    part.current = Checkpoints(repo, CheckpointLog.open(tmp_path / "inkhome", "s1"))
    part.current.warm()
    part.current.on_event(taken("in-1"))
    signal = AbortSignal()
    call = ToolCall("c1", "bash", {"command": "rm run.sh"})
    try:
        waiting = asyncio.ensure_future(part.gate(ToolCallContext(call, signal, harness.controller.setup)))
        await asyncio.sleep(0)
        assert not waiting.done()  # the snapshot is held
        signal.abort("user")
        refusal = await asyncio.wait_for(waiting, 30)  # a failure here, not a hang, if it waited on
        assert isinstance(refusal, Refusal) and "before it started" in refusal.reason
        assert (work / "run.sh").exists()
    finally:
        repo.release.set()
        await part.aclose()
        await harness.aclose()
