"""SEMANTICS R8-R36 through the RPC protocol: the real ``ink --mode rpc`` process, the fake model server in
strict mode, the real bash tool. Timing is controlled with the server's gates and marker files written by
the scripted commands; the test acts while a reply or a command is held.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.fakeserver import FakeModelServer, Fault, Reply, call, say, text, tool_call
from tests.jsonl_client import provider_args
from tests.processes import gone
from tests.rpc.client import RpcClient
from tests.rpc.conftest import StartRpc
from tests.rpc.helpers import held
from tests.waiting import wait_for_file

PROTOCOLS = ["openai", "anthropic"]
MARKER = "[interrupted by the user]"
SLEEPER = "sleep 60 & echo $! > child.pid; echo $$ > shell.pid; wait"
YOLO = ("--permission-mode", "yolo")  # tools run unasked (tests/rpc/test_permissions.py asks)
STUBBORN = "trap '' TERM; echo $$ > shell.pid; while true; do sleep 0.05; done"


def slow_settling_env(tmp_path: Path) -> dict[str, str]:
    """A kill delay of 2 s: a command that ignores SIGTERM keeps the abort settling that long."""
    from tests.cli.inkproc import ink_env

    home = tmp_path / "inkhome"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text("kill_delay = 2\n")
    return ink_env(tmp_path)


def start_stubborn(fake_server: FakeModelServer, project: Path, tmp_path: Path) -> RpcClient:
    """ink whose first tool call runs ``STUBBORN`` unasked, with the slow-settling kill delay."""
    fake_server.script(call("bash", {"command": STUBBORN}))
    return RpcClient.start(provider_args(fake_server, "openai", *YOLO), slow_settling_env(tmp_path), project)


def test_R8_R31_every_input_has_an_id_and_input_taken_proves_delivery(
    fake_server: FakeModelServer, start_rpc: StartRpc
) -> None:
    gate, reply = held(text("working"))
    fake_server.script(reply, say("ok"), say("done"))
    ink = start_rpc()
    first = ink.ok("prompt", text="start")
    gate.wait_reached()
    steer = ink.ok("steer", text="also this")
    follow = ink.ok("follow_up", text="and then")
    assert (first["queued"], steer["queued"], follow["queued"]) == (False, True, True)
    assert len({first["inputId"], steer["inputId"], follow["inputId"]}) == 3
    gate.open()
    ink.wait_event("run_end", stopReason="completed")
    taken = [(e["mode"], [i["inputId"] for i in e["inputs"]]) for e in ink.events("input_taken")]
    assert taken == [
        ("steer", [first["inputId"]]),  # R31: the input that started the run is taken as steer
        ("steer", [steer["inputId"]]),
        ("follow_up", [follow["inputId"]]),
    ]
    assert ink.events("queue_update")[-1]["queue"] == []


def test_R9_R10_R11_R15_the_four_message_example(fake_server: FakeModelServer, start_rpc: StartRpc) -> None:
    gate, reply = held(text("working"), tool_call("read", {"path": "notes.txt"}))
    fake_server.script(reply, say("work goes on"), say("did 1"), say("did 3"))
    ink = start_rpc()
    ink.ok("prompt", text="task")
    gate.wait_reached()
    ids = [
        ink.ok(kind, text=words)["inputId"]
        for kind, words in [
            ("follow_up", "follow-up 1"),
            ("steer", "steer 2"),
            ("follow_up", "follow-up 3"),
            ("steer", "steer 4"),
        ]
    ]
    gate.open()
    ink.wait_event("run_end", stopReason="completed")
    assert fake_server.user_texts() == [
        ["task"],
        ["task", "steer 2", "steer 4"],  # steers 2 and 4 together, the current work goes on
        ["task", "steer 2", "steer 4", "follow-up 1"],
        ["task", "steer 2", "steer 4", "follow-up 1", "follow-up 3"],
    ]
    taken = [[i["inputId"] for i in e["inputs"]] for e in ink.events("input_taken")][1:]
    assert taken == [[ids[1], ids[3]], [ids[0]], [ids[2]]]
    assert len(ink.events("run_start")) == 1 and len(ink.events("run_end")) == 1


def test_R12_a_take_at_the_would_end_point_skips_the_next_steer_poll(
    fake_server: FakeModelServer, start_rpc: StartRpc
) -> None:
    gate, reply = held(text("done"))
    fake_server.script(reply, say("one"), say("two"))
    ink = start_rpc("--steering-mode", "one-at-a-time")
    ink.ok("prompt", text="start")
    gate.wait_reached()
    ink.ok("steer", text="s1")
    ink.ok("steer", text="s2")
    gate.open()
    ink.wait_event("run_end", stopReason="completed")
    # s1 is taken at the would-end point; the poll before the next call is skipped, so s2 waits for the
    # next would-end point instead of joining s1.
    assert fake_server.user_texts()[1:] == [["start", "s1"], ["start", "s1", "s2"]]


def test_R16_a_stream_of_steers_delays_follow_ups(fake_server: FakeModelServer, start_rpc: StartRpc) -> None:
    gates = [held(text(f"reply {i}")) for i in range(3)]
    fake_server.script(*(reply for _, reply in gates), say("last"))
    ink = start_rpc()
    ink.ok("prompt", text="start")
    gates[0][0].wait_reached()
    ink.ok("follow_up", text="follow")
    ink.ok("steer", text="steer a")
    gates[0][0].open()
    gates[1][0].wait_reached()
    ink.ok("steer", text="steer b")
    gates[1][0].open()
    gates[2][0].open()
    ink.wait_event("run_end", stopReason="completed")
    assert fake_server.user_texts()[1:] == [
        ["start", "steer a"],
        ["start", "steer a", "steer b"],
        ["start", "steer a", "steer b", "follow"],  # the follow-up waited for the steers
    ]


def test_R13_set_modes_applies_from_the_next_run(fake_server: FakeModelServer, start_rpc: StartRpc) -> None:
    gate, reply = held(text("done"))
    gate2, reply2 = held(text("done"))
    fake_server.script(reply, say("a"), say("b"), reply2, say("both"))
    ink = start_rpc()
    ink.ok("prompt", text="start")
    gate.wait_reached()
    ink.ok("set_modes", followUp="all")  # too late for the run that goes on
    ink.ok("follow_up", text="f1")
    ink.ok("follow_up", text="f2")
    gate.open()
    ink.wait_event("run_end")
    assert fake_server.user_texts()[1:] == [["start", "f1"], ["start", "f1", "f2"]]  # one at a time
    mark = ink.mark()
    ink.ok("prompt", text="next")
    gate2.wait_reached()
    ink.ok("follow_up", text="f3")
    ink.ok("follow_up", text="f4")
    gate2.open()
    ink.wait_event("run_end", after=mark)
    assert fake_server.user_texts()[-1][-2:] == ["f3", "f4"]  # "all" now: taken together


def test_R14_bang_lines_run_in_the_shell_and_never_reach_the_model(
    fake_server: FakeModelServer, start_rpc: StartRpc
) -> None:
    gate, reply = held(tool_call("read", {"path": "notes.txt"}))
    fake_server.script(reply, say("done"))
    ink = start_rpc()
    bang = ink.ok("prompt", text="!cat notes.txt")
    end = ink.wait_event("bang_end", inputId=bang["inputId"])
    assert end == {
        "type": "bang_end",
        "command": "cat notes.txt",
        "output": end["output"],
        "exitCode": 0,
        "inputId": bang["inputId"],
    }
    assert "the secret is 42" in end["output"]
    assert ink.events("bang_start") == [
        {"type": "bang_start", "command": "cat notes.txt", "inputId": bang["inputId"]}
    ]
    assert fake_server.requests == [] and ink.events("run_start") == []
    mark = ink.mark()
    ink.ok("prompt", text="start")
    gate.wait_reached()
    queued_bang = ink.ok("steer", text="!echo after")["inputId"]
    ink.ok("steer", text="a real steer")
    gate.open()
    at, _ = ink.wait_event_at("run_end", after=mark)
    late = ink.wait_event("bang_end", after=at, inputId=queued_bang)  # flushed after the run (R26)
    assert late["output"].startswith("after")
    assert fake_server.user_texts()[-1] == ["start", "a real steer"]  # the steer passed over the bang line
    assert all("echo" not in t for texts in fake_server.user_texts() for t in texts)
    assert ink.ok("get_messages")["messages"][-1]["role"] == "assistant"  # bang output is not history


def test_R17_R22_R34_R35_abort_during_a_command_kills_its_tree_and_hands_input_back(
    fake_server: FakeModelServer, start_rpc: StartRpc, project: Path
) -> None:
    fake_server.script(call("bash", {"command": SLEEPER}, id="c1"), say("after the abort"))
    ink = start_rpc(*YOLO)
    ink.ok("prompt", text="run it")
    shell, child = int(wait_for_file(project / "shell.pid")), int(wait_for_file(project / "child.pid"))
    steer = ink.ok("steer", text="queued steer")["inputId"]
    follow = ink.ok("follow_up", text="queued follow-up")["inputId"]
    assert ink.ok("abort") == {"wasRunning": True}
    end = ink.wait_event("run_end")
    assert end["stopReason"] == "aborted" and "error" not in end  # R18: an outcome, not an error
    assert end["restoredInput"] == [
        {"inputId": steer, "text": "queued steer", "mode": "steer"},
        {"inputId": follow, "text": "queued follow-up", "mode": "follow_up"},
    ]
    receipt = end["receipt"]
    assert receipt["reason"] == "user" and receipt["interrupted"] == ["c1"]
    assert receipt["notStarted"] == [] and receipt["abandoned"] == [] and receipt["survivors"] == []
    assert receipt["restored"] == [steer, follow]
    assert gone(shell) and gone(child)  # R35: the background child too
    tool_end = ink.wait_event("tool_end", toolCallId="c1")
    assert tool_end["result"]["interrupted"] is True
    messages = ink.ok("get_messages")["messages"]
    assert messages[-2]["role"] == "tool_result" and messages[-2]["interrupted"] is True  # R33
    assert messages[-1] == {**messages[-1], "role": "user", "kind": "interruption", "text": MARKER}  # R23
    assert ink.ok("get_queue") == {"queue": []}  # R22: handed back, not run
    assert len(fake_server.requests) == 1
    mark = ink.mark()
    ink.ok("prompt", text="go on")
    ink.wait_event("run_end", after=mark, stopReason="completed")
    second = fake_server.requests[1]
    assert second.wait_finished() == "completed"  # R19: the strict server accepted the history
    assert second.user_texts() == ["run it", MARKER, "go on"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_R19_a_cut_off_reply_keeps_its_text_and_complete_calls_with_not_executed_results(
    fake_server: FakeModelServer, start_rpc: StartRpc, protocol: str
) -> None:
    gate, _ = held()
    cut = Reply([text("partial "), tool_call("read", {"path": "notes.txt"}, id="c1"), text("more"), gate])
    fake_server.script(cut, say("resumed"))
    ink = start_rpc(protocol=protocol)
    ink.ok("prompt", text="go")
    gate.wait_reached()
    ink.wait_event("text_delta", text="more")
    ink.ok("abort")
    ink.wait_event("run_end", stopReason="aborted")
    messages = ink.ok("get_messages")["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool_result", "user"]
    reply, result = messages[1], messages[2]
    assert reply["stopReason"] == "aborted"
    assert [b["type"] for b in reply["content"]] == ["text", "tool_call", "text"]
    assert result["toolCallId"] == "c1" and "not executed" in result["output"].lower()
    assert ink.wait_event("tool_start", toolCallId="c1")["name"] == "read"  # R19: one start, one end
    assert [e["toolCallId"] for e in ink.events("tool_end")] == ["c1"]
    assert ink.events("run_end")[-1]["receipt"]["notStarted"] == ["c1"]
    mark = ink.mark()
    ink.ok("prompt", text="again")
    ink.wait_event("run_end", after=mark, stopReason="completed")
    assert fake_server.requests[1].wait_finished() == "completed"  # the strict server accepted it
    gate.open()


def test_R21_sigint_aborts_the_run_and_the_process_keeps_serving(
    fake_server: FakeModelServer, start_rpc: StartRpc
) -> None:
    gate, reply = held(text("never"))
    fake_server.script(reply, say("after"))
    ink = start_rpc()
    ink.ok("prompt", text="go")
    gate.wait_reached()
    ink.signal(signal.SIGINT)
    end = ink.wait_event("run_end")
    assert end["stopReason"] == "aborted" and end["receipt"]["reason"] == "user"
    ink.signal(signal.SIGINT)  # idle now: nothing to interrupt, the process stays
    assert ink.ok("get_state")["state"] == "idle"
    mark = ink.mark()
    ink.ok("prompt", text="again")
    ink.wait_event("run_end", after=mark, stopReason="completed")
    gate.open()
    ink.close_stdin()
    assert ink.wait_exit() == 0
    assert "nothing to interrupt" in ink.stderr


def test_R21_a_second_sigint_while_the_abort_settles_exits_130(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    with start_stubborn(fake_server, project, tmp_path) as ink:
        ink.ok("prompt", text="run it")
        shell = int(wait_for_file(project / "shell.pid"))
        ink.signal(signal.SIGINT)
        ink.wait_event("tool_cancelling")  # the abort is under way and cannot finish for 2 s
        assert ink.ok("get_state")["state"] == "running"  # R21: running until settled
        ink.signal(signal.SIGINT)
        assert ink.wait_exit() == 130
        assert ink.events("run_end") == []  # the forced exit: the settle never finished
        assert gone(shell)
        assert ink.violations == []


def test_R24_interrupt_with_redirects_and_a_replaced_redirect_is_handed_back(
    fake_server: FakeModelServer, start_rpc: StartRpc
) -> None:
    gate, _ = held()
    fake_server.script(Reply([text("partial "), gate]), say("redirected"))
    ink = start_rpc()
    ink.ok("prompt", text="first task")
    gate.wait_reached()
    ink.wait_event("text_delta", text="partial ")
    # Both lines in one read: the second redirect comes before the first could start (R24).
    ink.send_raw(
        b'{"type":"interrupt_with","id":"r1","text":"no, do A"}\n'
        b'{"type":"interrupt_with","id":"r2","text":"no, do B"}\n'
    )
    first, second = ink.wait_response("r1")["data"], ink.wait_response("r2")["data"]
    assert first["queued"] is True and second["queued"] is True
    restored = ink.wait_event("input_restored")
    assert restored["restoredInput"] == [{"inputId": first["inputId"], "text": "no, do A", "mode": "steer"}]
    ink.wait_event("run_end", stopReason="aborted")
    mark = ink.mark()
    ink.wait_event("run_end", after=mark, stopReason="completed")
    taken = ink.events("input_taken")[-1]
    assert taken["inputs"] == [{"inputId": second["inputId"], "text": "no, do B"}]
    assert fake_server.user_texts()[-1] == ["first task", MARKER, "no, do B"]
    messages = ink.ok("get_messages")["messages"]
    assert messages[1]["content"] == [{"type": "text", "text": "partial "}]  # the work so far stays
    gate.open()


def test_R27_a_provider_error_hands_the_queue_back_and_the_process_lives_on(
    fake_server: FakeModelServer, start_rpc: StartRpc
) -> None:
    gate, reply = held(tool_call("read", {"path": "notes.txt"}))
    fake_server.script(reply, Fault.http(400, "The model `x` does not exist"), say("fine again"))
    ink = start_rpc()
    ink.ok("prompt", text="start")
    gate.wait_reached()
    queued = ink.ok("follow_up", text="later")["inputId"]
    gate.open()
    end = ink.wait_event("run_end")
    assert end["stopReason"] == "error" and "does not exist" in end["error"]
    assert end["restoredInput"] == [{"inputId": queued, "text": "later", "mode": "follow_up"}]
    assert "receipt" not in end
    assert ink.ok("get_state")["state"] == "idle"
    mark = ink.mark()
    ink.ok("prompt", text="try again")
    ink.wait_event("run_end", after=mark, stopReason="completed")


def test_R26_R28_max_iterations_ends_the_run_and_flushes_the_queue_as_new_runs(
    fake_server: FakeModelServer, start_rpc: StartRpc
) -> None:
    gate, reply = held(tool_call("read", {"path": "notes.txt"}, id="c1"))
    fake_server.script(reply, call("read", {"path": "notes.txt"}, id="c2"), say("did f1"), say("did f2"))
    ink = start_rpc("--max-iterations", "1")
    ink.ok("prompt", text="loop")
    gate.wait_reached()
    f1 = ink.ok("follow_up", text="f1")["inputId"]
    f2 = ink.ok("follow_up", text="f2")["inputId"]
    gate.open()
    ink.wait_event("run_end", stopReason="max_iterations")
    first = ink.wait_event("input_taken", inputs=[{"inputId": f1, "text": "f1"}])
    ink.wait_event("input_taken", inputs=[{"inputId": f2, "text": "f2"}])
    assert first["mode"] == "follow_up"
    _, last = ink.wait_line(lambda x: x.get("type") == "run_end" and x.get("runId") == "run-3")
    assert [e["stopReason"] for e in ink.events("run_end")] == ["max_iterations", "completed", "completed"]
    assert len(ink.events("run_start")) == 3  # each flushed entry is its own run (R26)
    results = [m for m in ink.ok("get_messages")["messages"] if m["role"] == "tool_result"]
    assert [r["toolCallId"] for r in results] == ["c1", "c2"]
    assert "not executed" in results[1]["output"].lower()  # R28: the call past the limit
    assert all(r.wait_finished() == "completed" for r in fake_server.requests)
    assert last["restoredInput"] == []


def test_R32_R36_input_sent_while_the_abort_settles_is_restored_not_run(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    with start_stubborn(fake_server, project, tmp_path) as ink:
        ink.ok("prompt", text="run it")
        wait_for_file(project / "shell.pid")
        before = ink.ok("steer", text="before the abort")["inputId"]
        ink.ok("abort")
        ink.wait_event("tool_cancelling")
        during = ink.ok("follow_up", text="during the abort")
        assert during["queued"] is True
        assert [q["inputId"] for q in ink.ok("get_queue")["queue"]] == [before, during["inputId"]]
        end = ink.wait_event("run_end")
        assert [r["inputId"] for r in end["restoredInput"]] == [before, during["inputId"]]
        assert len(fake_server.requests) == 1
        ink.close_stdin()
        assert ink.wait_exit() == 0


def test_R22_R36_an_abort_during_a_bang_line_hands_input_back_in_input_restored(
    fake_server: FakeModelServer, start_rpc: StartRpc, project: Path
) -> None:
    ink = start_rpc()
    bang = ink.ok("prompt", text="!echo $$ > bang.pid; sleep 60")["inputId"]
    shell = int(wait_for_file(project / "bang.pid"))
    queued = ink.ok("prompt", text="while the bang runs")
    assert queued["queued"] is True
    ink.ok("abort")
    end = ink.wait_event("bang_end", inputId=bang)
    assert end["interrupted"] is True
    restored = ink.wait_event("input_restored")
    assert restored["restoredInput"] == [
        {"inputId": queued["inputId"], "text": "while the bang runs", "mode": "steer"}
    ]
    assert ink.events("run_end") == [] and fake_server.requests == []
    assert gone(shell)
    assert ink.ok("get_state")["state"] == "idle"
