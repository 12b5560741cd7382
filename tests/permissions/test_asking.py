"""Asking through a real RunController, real tools and the fake model server: answers, the timeout, and
an abort while a question is open (R4, R19, R34)."""

from __future__ import annotations

import asyncio
import stat
from collections.abc import AsyncIterator
from pathlib import Path

import msgspec
import pytest

from ink.agent.events import Notice
from ink.ai.messages import ToolResult
from ink.permissions import PermissionHook, PermissionMemory, RuleSet
from ink.permissions.policy import PermissionPolicy
from ink.run.events import PermissionRequest, PermissionResolved, RunEnd
from ink.tools import ProcessRegistry, default_tools
from ink.vocabulary import Answer
from tests.fakeserver import FakeModelServer, Reply, call, say, tool_call
from tests.permissions.helpers import builtin_tools
from tests.run.harness import Harness

TOUCH = "echo ran >> ran.txt"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    work = tmp_path / "proj"
    work.mkdir()
    return work


@pytest.fixture
async def harness(fake_server: FakeModelServer, project: Path, tmp_path: Path) -> AsyncIterator[Harness]:
    """A controller whose loop has the real tools and the permission hook (mode ``ask``)."""
    processes = ProcessRegistry()
    h = Harness(fake_server, tools=default_tools(project, processes))
    policy = PermissionPolicy("ask", RuleSet(), project, builtin_tools(project))
    memory = PermissionMemory(project, tmp_path / "inkhome")
    notices: list[str] = []
    hook = PermissionHook(policy, h.controller.permissions, memory=memory, notify=notices.append)
    h.setup = msgspec.structs.replace(h.setup, before_tool=(hook,))
    h.notices = notices  # type: ignore[attr-defined]
    yield h
    await processes.terminate_all(0.2)
    await h.aclose()


def answer_each(h: Harness, answers: list[Answer]) -> None:
    """Answer the questions as they come, in order (an event listener, like a frontend's)."""

    def on_event(event: object) -> None:
        if isinstance(event, PermissionRequest):
            h.controller.permissions.answer(event.request_id, answers.pop(0))

    h.controller.subscribe(on_event)


def result_of(h: Harness, call_id: str) -> ToolResult:
    return next(r for r in h.results() if r.tool_call_id == call_id)


async def test_allow_runs_the_call_and_deny_refuses_it_and_the_run_goes_on(
    harness: Harness, fake_server: FakeModelServer, project: Path
) -> None:
    fake_server.script(
        call("bash", {"command": TOUCH}, id="c1"), call("bash", {"command": TOUCH}, id="c2"), say("done")
    )
    answer_each(harness, ["allow", "deny"])
    harness.controller.submit("touch it twice")
    await harness.settled()
    assert [e.stop_reason for e in harness.run_ends()] == ["completed"]
    assert (project / "ran.txt").read_text() == "ran\n"  # once: the second call was denied
    assert result_of(harness, "c1").is_error is False
    denied = result_of(harness, "c2")
    assert denied.is_error and "the user denied permission for the bash command" in denied.output
    assert [e.decision for e in harness.events if isinstance(e, PermissionResolved)] == ["allow", "deny"]
    assert "tool_running" not in harness.types()  # R4: nothing ran concurrently; nothing ran when refused
    [(_, seen)] = fake_server.requests[2].tool_results()[-1:]
    assert "denied" in seen  # the model was told


async def test_always_is_remembered_at_once_and_in_the_project_file(
    harness: Harness, fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    fake_server.script(
        Reply(
            [tool_call("bash", {"command": TOUCH}, id="c1"), tool_call("bash", {"command": TOUCH}, id="c2")]
        ),
        call("bash", {"command": TOUCH}, id="c3"),
        say("done"),
    )
    answer_each(harness, ["always"])  # one answer for three identical calls
    harness.controller.submit("touch it three times")
    await harness.settled()
    assert (project / "ran.txt").read_text() == "ran\n" * 3
    assert len([e for e in harness.events if isinstance(e, PermissionRequest)]) == 1
    memory = PermissionMemory(project, tmp_path / "inkhome")
    saved = memory.path.read_text()
    assert '"bash(echo ran >> ran.txt)"' in saved
    rules, warning = memory.load()
    assert warning is None and [r.text for r in rules] == ["bash(echo ran >> ran.txt)"]
    assert stat.S_IMODE(memory.path.stat().st_mode) == 0o600
    assert not (project / ".ink").exists()  # nothing of ink's in the user's repository


async def test_an_always_answer_holding_a_secret_is_not_written_to_the_project(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    """An "always" rule quotes the whole command; with a key in it, it holds for this process only."""
    secret = "sk-proj-" + "Z9" * 20
    command = f"echo {secret} >> ran.txt"
    processes = ProcessRegistry()
    h = Harness(fake_server, tools=default_tools(project, processes))
    notices: list[str] = []
    hook = PermissionHook(
        PermissionPolicy("ask", RuleSet(), project, builtin_tools(project)),
        h.controller.permissions,
        memory=PermissionMemory(project, tmp_path / "inkhome"),
        notify=notices.append,
    )
    h.setup = msgspec.structs.replace(h.setup, before_tool=(hook,))
    fake_server.script(
        call("bash", {"command": command}, id="c1"), call("bash", {"command": command}, id="c2"), say("ok")
    )
    answer_each(h, ["always"])
    h.controller.submit("twice")
    await h.settled()
    await processes.terminate_all(0.2)
    await h.aclose()
    assert (project / "ran.txt").read_text() == f"{secret}\n" * 2  # remembered for this process
    assert not PermissionMemory(project, tmp_path / "inkhome").path.exists()
    [note] = notices
    assert "holds a secret" in note and secret not in note and "[REDACTED]" in note


async def test_an_abort_while_asking_cancels_the_question_and_leaves_a_valid_history(
    harness: Harness, fake_server: FakeModelServer, project: Path
) -> None:
    fake_server.script(call("bash", {"command": TOUCH}, id="c1", say_first="Let me touch it."))
    harness.controller.submit("touch it")
    request = await harness.wait_event(PermissionRequest)
    assert isinstance(request, PermissionRequest) and request.args == {"command": TOUCH}
    assert [q.request_id for q in harness.controller.permissions.open_questions()] == [request.request_id]
    harness.controller.abort()
    await harness.settled()
    resolved = await harness.wait_event(PermissionResolved)
    assert isinstance(resolved, PermissionResolved) and resolved.decision == "cancelled"
    [end] = harness.run_ends()
    assert end.stop_reason == "aborted" and end.receipt is not None
    assert end.receipt.not_started == ("c1",)  # R34: the receipt counts it as cancelled before start
    cancelled = result_of(harness, "c1")
    assert cancelled.is_error and cancelled.output.startswith("Not executed: cancelled by the user")
    assert not (project / "ran.txt").exists()
    assert harness.controller.permissions.open_questions() == []
    starts = [e for e in harness.types() if e == "tool_start"]
    assert len(starts) == 1 and harness.types().count("tool_end") == 1  # R19: one start, one end
    fake_server.script(say("fine"))  # the strict server rejects a history with a dangling call
    harness.controller.submit("go on")
    await harness.settled()
    assert [e.stop_reason for e in harness.run_ends()] == ["aborted", "completed"]
    assert fake_server.requests[-1].wait_finished() == "completed"


async def test_an_unanswered_question_times_out_into_a_denial(
    harness: Harness, fake_server: FakeModelServer, project: Path
) -> None:
    harness.controller.permissions.timeout_seconds = 0.2
    fake_server.script(call("bash", {"command": TOUCH}, id="c1"), say("ok"))
    harness.controller.submit("touch it")
    await harness.settled()
    assert [e.decision for e in harness.events if isinstance(e, PermissionResolved)] == ["timeout"]
    refused = result_of(harness, "c1")
    assert refused.is_error and "did not answer the permission request" in refused.output
    assert "within 0.2 s" in refused.output
    assert [e.stop_reason for e in harness.run_ends()] == ["completed"]  # the run went on
    assert not (project / "ran.txt").exists()


async def test_an_always_that_cannot_be_saved_holds_for_the_session_and_says_so(
    harness: Harness, fake_server: FakeModelServer, project: Path
) -> None:
    home = project.parent / "inkhome"  # the harness's $INK_HOME
    home.mkdir(exist_ok=True)
    (home / "projects").write_text("a file where the folder should be")
    fake_server.script(
        call("bash", {"command": TOUCH}, id="c1"), call("bash", {"command": TOUCH}, id="c2"), say("ok")
    )
    answer_each(harness, ["always"])
    harness.controller.submit("touch it twice")
    await harness.settled()
    assert (project / "ran.txt").read_text() == "ran\n" * 2
    [note] = harness.notices  # type: ignore[attr-defined]
    assert "could not save the permission bash(echo ran >> ran.txt)" in note and "this session only" in note


async def test_reads_never_ask_and_run_concurrently(
    harness: Harness, fake_server: FakeModelServer, project: Path
) -> None:
    (project / "a.txt").write_text("alpha\n")
    fake_server.script(
        Reply(
            [tool_call("read", {"path": "a.txt"}, id="r1"), tool_call("grep", {"pattern": "alpha"}, id="r2")]
        ),
        say("read"),
    )
    harness.controller.submit("read")
    await harness.settled()
    assert "permission_request" not in harness.types()
    assert harness.types().count("tool_running") == 2
    assert "alpha" in result_of(harness, "r1").output


async def test_notices_reach_listeners_as_warnings(fake_server: FakeModelServer, project: Path) -> None:
    """Print mode's refusals are warning notices: the hook's ``notify`` with no one to ask."""
    h = Harness(fake_server, tools=default_tools(project, ProcessRegistry()))
    hook = PermissionHook(
        PermissionPolicy("ask", RuleSet(), project, builtin_tools(project)),
        None,
        notify=lambda text: h.controller.emit(Notice(text, "warning")),
    )
    h.setup = msgspec.structs.replace(h.setup, before_tool=(hook,))
    fake_server.script(call("bash", {"command": TOUCH}, id="c1"), say("ok"))
    h.controller.submit("touch it")
    await asyncio.wait_for(h.controller.wait_idle(), 10)
    [notice] = [e for e in h.events if isinstance(e, Notice)]
    assert notice.level == "warning" and "--allow 'bash(echo ran >> ran.txt)'" in notice.text
    assert "permission_request" not in h.types()
    assert "nobody can answer" in result_of(h, "c1").output
    assert isinstance(h.events[-1], RunEnd)
    await h.aclose()
