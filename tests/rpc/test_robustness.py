"""Bad input never kills ``ink --mode rpc`` and never costs a valid command its answer; the process ends
as CONTRACT.md says (end of input, SIGTERM, a closed stdout). stdout must hold protocol lines only (the
``start_rpc`` fixture checks every line of every test)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
from pathlib import Path
from typing import Any

from tests.cli.inkproc import INK, ink_env
from tests.fakeserver import FakeModelServer, Gate, Reply, call, say, text, tool_call
from tests.jsonl_client import provider_args
from tests.processes import gone
from tests.rpc.client import RpcClient
from tests.rpc.conftest import StartRpc
from tests.rpc.helpers import held, mid_run
from tests.waiting import wait_for_file

LIMIT = 1 << 20


def line(obj: Any) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def run_with_stdin(
    path: Path, fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> subprocess.CompletedProcess[bytes]:
    """``ink --mode rpc < path`` to its end."""
    with path.open("rb") as stdin:
        return subprocess.run(
            [*INK, "--mode", "rpc", *provider_args(fake_server, "openai")],
            env=ink_env(tmp_path),
            cwd=project,
            stdin=stdin,
            capture_output=True,
            timeout=60,
        )


def garbage_lines(rng: random.Random) -> list[tuple[bytes, str]]:
    """Bad lines and a fragment of the reason each must be rejected with."""
    noise = bytes(rng.choice([b for b in range(256) if b != 10]) for _ in range(300))
    return [
        (noise + b"\n", ""),  # random bytes: invalid UTF-8 or invalid JSON, either way a clear reason
        (b'{"type":"prompt","text":"hel\n', "not valid JSON"),  # truncated JSON
        (b"[1, 2, 3]\n", "must be a JSON object, got an array"),
        (b'"prompt"\n', "must be a JSON object, got a string"),
        (b"null\n", "must be a JSON object, got null"),
        (b'{"text": "no type"}\n', 'no "type" field'),
        (b'{"type": 7}\n', '"type" must be a string'),
        (b"\xff\xfe\xfd\n", "not valid UTF-8"),
        (b"{" + b'"a":' * 10 + b"\n", "not valid JSON"),
        (b"[" * 100_000 + b"\n", "not valid JSON"),  # nesting too deep for the parser: no crash
    ]


def test_garbage_between_valid_commands_costs_no_valid_command_its_answer(
    fake_server: FakeModelServer, start_rpc: StartRpc
) -> None:
    fake_server.script(say("the answer"))
    ink = start_rpc()
    rng = random.Random(5)
    over = b'{"type":"prompt","id":"big","text":"' + b"a" * (LIMIT + 10) + b'"}\n'
    under = line({"type": "edit_queued", "id": "under", "inputId": "in-9", "text": "b" * (LIMIT - 100)})
    assert len(under) - 1 <= LIMIT
    valid = [
        line({"type": "get_state", "id": 1}),
        line({"type": "prompt", "id": "p", "text": "hi"}),
        line({"type": "set_modes", "id": 2.5, "followUp": "all"}),
        under,
        line({"type": "get_queue", "id": "q"}),
    ]
    sent: list[tuple[bytes, str | None]] = []  # (line, None for a valid one, else the reason fragment)
    for i, good in enumerate(valid):
        for bad, reason in rng.sample(garbage_lines(rng), 3):
            sent.append((bad, reason))
        if i == 2:
            sent.append((over, "longer than the limit"))
        sent.append((good, None))
    ink.send_raw(b"".join(data for data, _ in sent))
    ink.wait_response("q")
    answers = ink.responses()
    assert len(answers) == len(sent)  # exactly one response per line, in order
    for (data, reason), answer in zip(sent, answers, strict=True):
        if reason is None:
            expected = json.loads(data)
            assert answer["id"] == expected["id"] and answer["command"] == expected["type"], answer
            if expected["type"] == "edit_queued":  # parsed in full: the 1 MB text reached the command
                assert answer["ok"] is False and "no input with id 'in-9'" in answer["error"]
            else:
                assert answer["ok"] is True, answer
        else:
            assert answer["ok"] is False and reason in answer["error"], (data[:60], answer)
    assert answers[[d for d, _ in sent].index(over)]["id"] == "big"  # the id was read from its head
    ink.wait_event("run_end", stopReason="completed")
    assert fake_server.user_texts() == [["hi"]]


def test_each_kind_of_bad_command_gets_its_reason_and_its_id(
    fake_server: FakeModelServer, start_rpc: StartRpc
) -> None:
    ink = start_rpc()
    cases: list[tuple[bytes, Any, str]] = [
        (b'{"type":"launch","id":"a"}\n', "a", "unknown command 'launch'"),
        (b'{"type":"prompt","id":"b"}\n', "b", 'prompt needs the field "text"'),
        (b'{"type":"prompt","id":"c","text":5}\n', "c", '"text" must be a string, got a number'),
        (b'{"type":"prompt","id":"d","text":"  "}\n', "d", '"text" must not be empty'),
        (b'{"type":"prompt","id":"e","text":"x","mode":"steer"}\n', "e", "unknown field 'mode' for prompt"),
        (b'{"type":"get_state","id":{"x":1}}\n', {"x": 1}, '"id" must be a string or a number'),
        (b'{"type":"get_state","id":NaN}\n', None, "NaN is not a JSON value"),
        (b'{"type":"get_state","id":1e400}\n', None, "the number 1e400 is out of range"),  # not null
        (b'{"type":"get_state","id":1e-400}\n', None, "the number 1e-400 is out of range"),  # not 0.0
        (b'{"type":"prompt","id":1.5e3}\n', 1500.0, 'prompt needs the field "text"'),  # in range: echoed
        (b'{"type":"prompt","id":"f","text":"\xff"}\n', "f", "not valid UTF-8 (byte 0xff"),
        (b'{"type":"set_queued_mode","id":"g","inputId":"in-1"}\n', "g", 'needs the field "mode"'),
        (b'{"type":"permission","id":"h","requestId":"p","decision":"yes"}\n', "h", "allow, deny, always"),
    ]
    ink.send_raw(b"".join(data for data, _, _ in cases))
    ink.wait_line(lambda x: x.get("id") == "h")
    for (data, command_id, reason), answer in zip(cases, ink.responses(), strict=True):
        assert answer["ok"] is False and reason in answer["error"], (data, answer)
        assert answer.get("id") == command_id, (data, answer)
    assert ink.ok("get_state")["state"] == "idle"  # and it keeps serving


def test_blank_lines_crlf_and_a_last_line_without_newline(
    fake_server: FakeModelServer, start_rpc: StartRpc
) -> None:
    ink = start_rpc()
    ink.send_raw(b'\n  \n{"type":"get_queue","id":1}\r\n\n{"type":"get_state","id":2}')
    ink.close_stdin()
    assert ink.wait_exit() == 0
    assert [(r["id"], r["ok"]) for r in ink.responses()] == [(1, True), (2, True)]
    assert ink.events() == []


def test_end_of_input_while_running_aborts_settles_writes_run_end_and_exits_0(
    fake_server: FakeModelServer, start_rpc: StartRpc, project: Path
) -> None:
    command = "sleep 60 & echo $! > child.pid; wait"
    fake_server.script(call("bash", {"command": command}, id="c1"))
    ink = start_rpc("--permission-mode", "yolo")
    ink.ok("prompt", text="run it")
    child = int(wait_for_file(project / "child.pid"))
    queued = ink.ok("follow_up", text="never run")["inputId"]
    ink.close_stdin()
    assert ink.wait_exit() == 0
    end = ink.events()[-1]
    assert end["type"] == "run_end" and end["stopReason"] == "aborted"
    assert end["receipt"]["reason"] == "end of input" and end["receipt"]["interrupted"] == ["c1"]
    assert [r["inputId"] for r in end["restoredInput"]] == [queued]
    assert gone(child)
    assert ink.stderr == ""


def test_end_of_input_while_idle_exits_0_at_once(fake_server: FakeModelServer, start_rpc: StartRpc) -> None:
    ink = start_rpc()
    ink.close_stdin()
    assert ink.wait_exit() == 0
    assert ink.lines == [] and ink.stderr == ""


def test_sigterm_aborts_the_run_and_exits_143(fake_server: FakeModelServer, start_rpc: StartRpc) -> None:
    ink, gate = mid_run(fake_server, start_rpc)
    ink.signal(signal.SIGTERM)
    assert ink.wait_exit() == 143
    end = ink.events()[-1]
    assert end["type"] == "run_end" and end["receipt"]["reason"] == "terminated"
    assert fake_server.requests[0].wait_finished() == "client_left"
    gate.open()


def test_a_client_that_closes_stdout_ends_the_process_with_141(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    gate, reply = held(text("never"))
    fake_server.script(reply)
    read_end, write_end = os.pipe()
    proc = subprocess.Popen(
        [*INK, "--mode", "rpc", *provider_args(fake_server, "openai")],
        env=ink_env(tmp_path),
        cwd=project,
        stdin=subprocess.PIPE,
        stdout=write_end,
        stderr=subprocess.PIPE,
    )
    os.close(write_end)
    try:
        assert proc.stdin is not None
        proc.stdin.write(b'{"type":"prompt","text":"go"}\n')
        proc.stdin.flush()
        gate.wait_reached()
        os.close(read_end)  # the client goes away without closing stdin
        proc.stdin.write(b'{"type":"get_state"}\n')  # its response hits the closed pipe
        proc.stdin.flush()
        _, err = proc.communicate(timeout=30)
    finally:
        gate.open()
        proc.kill()
    assert proc.returncode == 141, err
    assert fake_server.requests[0].wait_finished() == "client_left"  # the run was aborted


def test_a_client_that_does_not_read_stdout_does_not_stall_the_run(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    """Far more output than a pipe holds (~1 MB of events) while nobody reads: the run still goes on
    (the tool runs and the next model call is made), and every line arrives later, in order."""
    pieces = [f"piece {i} " for i in range(15_000)]
    gate = Gate()
    fake_server.script(
        Reply([*(text(p) for p in pieces), tool_call("read", {"path": "notes.txt"}, id="c1")]),
        Reply([gate, text("end")]),
    )
    with RpcClient.start(
        provider_args(fake_server, "openai"), ink_env(tmp_path), project, paused=True
    ) as ink:
        ink.send("prompt", text="talk a lot")
        fake_server.wait_for_requests(2, timeout=30)  # the loop went on although stdout is full
        gate.wait_reached()
        gate.open()
        ink.resume_reading()
        ink.wait_event("run_end", stopReason="completed")
        assert "".join(e["text"] for e in ink.events("text_delta")) == "".join(pieces) + "end"
        types = [e["type"] for e in ink.events()]
        assert types.index("tool_end") < types.index("run_end") == len(types) - 1
        assert ink.violations == []


def test_commands_can_come_from_a_regular_file(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    """A file cannot be watched by the event loop: it is read by a thread, with the same results."""
    commands = tmp_path / "commands.jsonl"
    commands.write_bytes(b'{"type":"get_state","id":1}\nnot json\n{"type":"get_queue","id":2}\n')
    done = run_with_stdin(commands, fake_server, project, tmp_path)
    assert done.returncode == 0, done.stderr
    answers = [json.loads(x) for x in done.stdout.splitlines()]
    assert [(a.get("id"), a["ok"]) for a in answers] == [(1, True), (None, False), (2, True)]


def test_stdin_from_dev_null_is_an_empty_input(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    """``/dev/null`` is a device the event loop cannot watch (epoll refuses it): it is read like the rest."""
    done = run_with_stdin(Path(os.devnull), fake_server, project, tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def test_a_stdin_left_non_blocking_by_the_parent_is_still_read(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    """Reading an empty non-blocking stdin fails with EAGAIN: that is a wait for data, not the end of input.
    (After the first answer ink's next read finds the pipe empty.)"""
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    proc = subprocess.Popen(
        [*INK, "--mode", "rpc", *provider_args(fake_server, "openai")],
        env=ink_env(tmp_path),
        cwd=project,
        stdin=read_end,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    os.close(read_end)
    try:
        assert proc.stdout is not None
        os.write(write_end, b'{"type":"get_state","id":1}\n')
        first = json.loads(proc.stdout.readline())
        os.write(write_end, b'{"type":"get_queue","id":2}\n')
        second = json.loads(proc.stdout.readline() or b"null")
    finally:
        os.close(write_end)
        _, err = proc.communicate(timeout=30)
    assert (first["id"], second and second["id"], proc.returncode) == (1, 2, 0), err
