"""What only the RPC process adds to the run rules: signals (SIGINT is the interrupt of R21) and the
order in which commands read in one go take effect (R24). The rules themselves are proven once, on the
controller and loop, in tests/run; the real ``ink --mode rpc`` process runs here against the fake model
server, with the real bash tool.
"""

from __future__ import annotations

import signal
from pathlib import Path

from tests.fakeserver import FakeModelServer, Reply, call, say, text
from tests.jsonl_client import provider_args
from tests.processes import gone
from tests.rpc.client import RpcClient
from tests.rpc.conftest import StartRpc
from tests.rpc.helpers import held, mid_run
from tests.waiting import poll_until, wait_for_file

MARKER = "[interrupted by the user]"
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


def test_R21_sigint_aborts_the_run_and_the_process_keeps_serving(
    fake_server: FakeModelServer, start_rpc: StartRpc
) -> None:
    ink, gate = mid_run(fake_server, start_rpc, say("after"))
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
        # SIGKILLed on the way out (R35); the kernel ends it a moment later: delivered, not instant
        poll_until(lambda: gone(shell), 5, "the SIGKILLed shell gone")
        assert ink.violations == []


def test_R24_two_interrupt_with_lines_read_at_once_take_effect_in_order(
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
