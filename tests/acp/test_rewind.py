"""Issue 14 over ACP: ``/rewind`` is offered in the editor's command list and answered by ink itself (never
sent to the model); an aborted run's end names the files it changed. The real ``ink acp`` and bash against
the fake model server."""

from __future__ import annotations

from pathlib import Path

from tests.acp.client import AcpClient
from tests.acp.conftest import StartAcp, open_session, text_prompt
from tests.fakeserver import FakeModelServer, call, say
from tests.waiting import wait_for_file

YOLO = ("--permission-mode", "yolo")


def turn(ink: AcpClient, session: str, text: str) -> str:
    """Send a prompt, wait for its end_turn; the agent's message text of that turn."""
    at = ink.mark()
    request = ink.send("session/prompt", sessionId=session, prompt=text_prompt(text))
    end, answer = ink.wait_response_at(request)
    assert answer["result"] == {"stopReason": "end_turn"}, answer
    return "".join(
        m["params"]["update"]["content"]["text"]
        for m in ink.lines[at:end]
        if m.get("method") == "session/update"
        and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    )


def test_the_rewind_command_is_offered_lists_inputs_and_rewinds_files_and_conversation(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path
) -> None:
    fake_server.script(
        call("bash", {"command": "echo x > made.txt; rm notes.txt"}), say("Done."), say("Fresh.")
    )
    ink = start_acp(*YOLO)
    session = open_session(ink, project)
    offered = ink.wait_update("available_commands_update")["availableCommands"]
    assert [c["name"] for c in offered] == ["rewind"]
    assert turn(ink, session, "make a mess") == "Done."
    listed = turn(ink, session, "/rewind")
    assert "1. " in listed and "“make a mess”" in listed and "2 file(s): made.txt, notes.txt" in listed
    answer = turn(ink, session, "/rewind 1")
    assert "Rewound to just before “make a mess”" in answer and "1 restored, 1 removed" in answer
    assert "> make a mess" in answer  # the undone input, quoted for the user to send again
    assert not (project / "made.txt").exists() and (project / "notes.txt").read_text() == "the secret is 42\n"
    assert turn(ink, session, "start over") == "Fresh."
    assert fake_server.user_texts() == [["make a mess"], ["make a mess"], ["start over"]]  # /rewind: no model


def test_files_changed_outside_ink_need_force(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path
) -> None:
    fake_server.script(call("bash", {"command": "echo ink > made.txt"}), say("Done."))
    ink = start_acp(*YOLO)
    session = open_session(ink, project)
    turn(ink, session, "make it")
    assert "1 file(s): made.txt" in turn(ink, session, "/rewind")  # the run's end snapshot is taken
    (project / "made.txt").write_text("mine\n")
    refused = turn(ink, session, "/rewind 1 files")
    assert "Nothing was changed" in refused and "made.txt" in refused and "force" in refused
    assert (project / "made.txt").read_text() == "mine\n"
    assert "Files: 0 restored, 1 removed" in turn(ink, session, "/rewind 1 files force")
    assert not (project / "made.txt").exists()
    assert "usage: /rewind" in turn(ink, session, "/rewind one")
    assert "there is no input 9" in turn(ink, session, "/rewind 9")


def test_a_cancelled_run_names_the_files_it_changed(
    fake_server: FakeModelServer, start_acp: StartAcp, project: Path, marks: Path
) -> None:
    started = marks / "started"
    fake_server.script(call("bash", {"command": f"echo x > made.txt; echo up > {started}; sleep 60"}))
    ink = start_acp(*YOLO)
    session = open_session(ink, project)
    request = ink.send("session/prompt", sessionId=session, prompt=text_prompt("slow"))
    wait_for_file(started)
    ink.notify("session/cancel", sessionId=session)
    assert ink.wait_response(request)["result"] == {"stopReason": "cancelled"}
    notes = [
        u["content"]["text"] for u in ink.updates(session) if u["sessionUpdate"] == "agent_thought_chunk"
    ]
    assert any("the run changed 1 file(s): made.txt; /rewind restores them" in n for n in notes), notes
