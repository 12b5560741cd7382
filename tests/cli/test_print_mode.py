"""Print mode end to end: the real ``ink`` process against the fake model server, real files, real tools.

Covers issue 2 "what it must show": a turn with a tool call in both protocols, stream-json with
``text_delta`` before the reply's ``message_end``, a provider error exiting 1 with a clear line, and
SIGINT aborting cleanly (the server sees the client leave, tool processes are gone) with exit 130.
"""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.cli.inkproc import INK, ink_env, one_line_error, run_ink, start_ink
from tests.fakeserver import FakeModelServer, Fault, Gate, Reply, call, say, text
from tests.processes import gone
from tests.waiting import poll_until, wait_for_file

PROTOCOLS = ["openai", "anthropic"]
YOLO = ("--permission-mode", "yolo")  # these tests are about signals, not questions (tests/permissions)


def ink_args(server: FakeModelServer, protocol: str, *more: str) -> list[str]:
    base = server.base_url(protocol)
    return ["-p", "--no-session", "--provider", protocol, "--base-url", base, "--api-key", "k", *more]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_turn_with_a_tool_call_prints_the_final_answer(
    fake_server: FakeModelServer, project: Path, tmp_path: Path, protocol: str
) -> None:
    fake_server.script(call("read", {"path": "notes.txt"}, say_first="Let me look."), say("It says ", "42."))
    done = run_ink(ink_args(fake_server, protocol, "what is in notes.txt?"), ink_env(tmp_path), project)
    assert (done.returncode, done.stdout, done.stderr) == (0, "It says 42.\n", "")
    first, second = fake_server.requests
    assert first.user_texts() == ["what is in notes.txt?"]
    assert str(project.resolve()) in first.system  # the system prompt names the working directory
    [(_, output)] = second.tool_results()
    assert "the secret is 42" in output  # the real read tool read the real file
    assert second.wait_finished() == "completed"


def test_the_prompt_can_come_on_stdin(fake_server: FakeModelServer, project: Path, tmp_path: Path) -> None:
    fake_server.script(say("hello back"))
    done = run_ink(ink_args(fake_server, "openai"), ink_env(tmp_path), project, stdin="hello from a pipe\n")
    assert (done.returncode, done.stdout) == (0, "hello back\n")
    assert fake_server.requests[0].user_texts() == ["hello from a pipe\n"]


def test_an_empty_prompt_is_a_usage_error(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    done = run_ink(ink_args(fake_server, "openai"), ink_env(tmp_path), project, stdin="  \n")
    assert done.returncode == 2
    assert "print mode needs a prompt" in one_line_error(done.stderr)
    assert fake_server.requests == []


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_stream_json_writes_every_event_as_it_happens(
    fake_server: FakeModelServer, project: Path, tmp_path: Path, protocol: str
) -> None:
    fake_server.script(call("read", {"path": "notes.txt"}), say("It ", "says ", "42."))
    args = ink_args(fake_server, protocol, "--output-format", "stream-json", "read notes.txt")
    done = run_ink(args, ink_env(tmp_path), project)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    types = [e["type"] for e in events]
    assert types[0] == "run_start" and types[-1] == "run_end"
    assert events[-1]["stopReason"] == "completed"
    start = next(e for e in events if e["type"] == "tool_start")
    end = next(e for e in events if e["type"] == "tool_end")
    assert (start["name"], start["args"]) == ("read", {"path": "notes.txt"})
    assert "the secret is 42" in end["result"]["output"] and end["result"]["isError"] is False
    last_end = max(i for i, t in enumerate(types) if t == "message_end")
    last_start = max(i for i, t in enumerate(types) if t == "message_start")
    deltas = [events[i]["text"] for i in range(last_start, last_end) if types[i] == "text_delta"]
    assert deltas == ["It ", "says ", "42."]  # one event per chunk, all before the reply's message_end
    assert events[last_end]["message"]["content"] == [{"type": "text", "text": "It says 42."}]


def test_stream_json_lines_arrive_before_the_run_ends(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    """Each line is flushed when its event happens: the first delta is readable while the model's
    stream is still held open by the server."""
    gate = Gate()
    fake_server.script(Reply([text("first "), gate, text("second")]))
    args = ink_args(fake_server, "openai", "--output-format", "stream-json", "go")
    proc = start_ink(args, ink_env(tmp_path), project)
    try:
        assert proc.stdout is not None
        seen: list[dict[str, Any]] = []
        while not seen or seen[-1]["type"] != "text_delta":
            seen.append(json.loads(proc.stdout.readline()))
        assert seen[-1]["text"] == "first "
        assert fake_server.requests[0].outcome == "in_progress"
    finally:
        gate.open()
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0
    assert json.loads(out.splitlines()[-1])["stopReason"] == "completed"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_provider_error_exits_1_with_the_servers_message(
    fake_server: FakeModelServer, project: Path, tmp_path: Path, protocol: str
) -> None:
    fake_server.script(Fault.http(400, "The model `nope` does not exist"))
    done = run_ink(ink_args(fake_server, protocol, "hi"), ink_env(tmp_path), project)
    assert done.returncode == 1
    assert done.stdout == ""
    line = one_line_error(done.stderr)
    assert "The model `nope` does not exist" in line and "400" in line


def test_a_rejected_key_exits_1_naming_the_problem(project: Path, tmp_path: Path) -> None:
    with FakeModelServer(api_key="right") as server:
        done = run_ink(
            ["-p", "--no-session", "--base-url", server.openai_base_url, "--api-key", "wrong", "hi"],
            ink_env(tmp_path),
            project,
        )
    assert done.returncode == 1
    line = one_line_error(done.stderr)
    assert "AuthError" in line and "Incorrect API key" in line


def test_max_iterations_exits_3_and_says_how_to_raise_it(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    fake_server.script(call("read", {"path": "notes.txt"}), call("read", {"path": "notes.txt"}))
    done = run_ink(
        ink_args(fake_server, "openai", "--max-iterations", "1", "loop"), ink_env(tmp_path), project
    )
    assert done.returncode == 3
    assert "--max-iterations" in one_line_error(done.stderr)
    assert len(fake_server.requests) == 2


def test_a_bang_line_runs_in_the_shell_not_the_model(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    done = run_ink(ink_args(fake_server, "openai", "!cat notes.txt"), ink_env(tmp_path), project)
    assert (done.returncode, done.stdout) == (0, "the secret is 42\n")
    assert fake_server.requests == []  # R14: never sent to the model


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_sigint_during_a_stream_closes_it_and_exits_130(
    fake_server: FakeModelServer, project: Path, tmp_path: Path, protocol: str
) -> None:
    gate = Gate()
    fake_server.script(Reply([text("partial "), gate, text("never sent")]))
    proc = start_ink(ink_args(fake_server, protocol, "go slowly"), ink_env(tmp_path), project)
    try:
        gate.wait_reached()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        gate.open()
        proc.kill()
    assert proc.returncode == 130
    assert out == ""  # no answer: the run did not complete
    assert err.strip() == "ink: interrupted" and "Traceback" not in err
    assert fake_server.requests[0].wait_finished() == "client_left"  # R17: the stream was closed
    assert len(fake_server.requests) == 1


def test_sigint_during_a_tool_kills_its_process_tree(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    command = "sleep 60 & echo $! > child.pid; echo $$ > shell.pid; wait"
    fake_server.script(call("bash", {"command": command}), say("not reached"))
    proc = start_ink(ink_args(fake_server, "openai", *YOLO, "run it"), ink_env(tmp_path), project)
    try:
        shell, child = int(wait_for_file(project / "shell.pid")), int(wait_for_file(project / "child.pid"))
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert gone(shell) and gone(child)  # R35: the whole tree, the background child included
    assert "still running" not in err
    assert len(fake_server.requests) == 1  # the interrupted run made no further model call


def test_a_second_sigint_while_settling_exits_at_once(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    """R21: the first SIGINT aborts; the tool ignores SIGTERM, so settling waits for the kill delay; a
    second SIGINT meanwhile force-exits 130 and still takes the tool's process down."""
    home = tmp_path / "inkhome"
    home.mkdir()
    (home / "config.toml").write_text("kill_delay = 2\n")
    command = "trap '' TERM; echo $$ > shell.pid; while true; do sleep 0.05; done"
    fake_server.script(call("bash", {"command": command}))
    proc = start_ink(ink_args(fake_server, "openai", *YOLO, "run it"), ink_env(tmp_path), project)
    try:
        shell = int(wait_for_file(project / "shell.pid"))
        proc.send_signal(signal.SIGINT)
        assert proc.stderr is not None
        assert "waiting up to" in proc.stderr.readline()  # the abort is under way (tool_cancelling)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130
    assert "interrupted" not in err  # the settled-abort path never ran: this was the forced exit
    # SIGKILLed on the way out (R35); the kernel ends it a moment later: delivered, not instant
    poll_until(lambda: gone(shell), 5, "the SIGKILLed shell gone")


def test_sigterm_aborts_cleanly_with_143(fake_server: FakeModelServer, project: Path, tmp_path: Path) -> None:
    gate = Gate()
    fake_server.script(Reply([text("partial "), gate]))
    proc = start_ink(ink_args(fake_server, "openai", "go"), ink_env(tmp_path), project)
    try:
        gate.wait_reached()
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    finally:
        gate.open()
        proc.kill()
    assert proc.returncode == 143
    assert fake_server.requests[0].wait_finished() == "client_left"


def test_closing_stdout_aborts_the_run(fake_server: FakeModelServer, project: Path, tmp_path: Path) -> None:
    gate = Gate()
    fake_server.script(Reply([text("one "), gate, text("two")]))
    proc = start_ink(
        ink_args(fake_server, "openai", "--output-format", "stream-json", "go"), ink_env(tmp_path), project
    )
    try:
        gate.wait_reached()
        assert proc.stdout is not None
        proc.stdout.close()  # the reader went away (like `| head -1`)
        gate.open()
        assert proc.stderr is not None
        err = proc.stderr.read()
        proc.wait(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 141
    assert "Traceback" not in err


def test_a_retry_is_noted_on_stderr_and_the_answer_still_comes(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    fake_server.script(Fault.http(429, "slow down", retry_after=0.01), say("fine now"))
    done = run_ink(ink_args(fake_server, "openai", "hi"), ink_env(tmp_path), project)
    assert (done.returncode, done.stdout) == (0, "fine now\n")
    note = one_line_error(done.stderr)
    assert note.startswith("ink: retrying in 0.0 s (attempt 2) after:") and "slow down" in note


def test_stream_json_shows_a_commands_live_output_and_its_exit_status(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    """tool_update (CONTRACT "Additions") while bash runs; the result's details for the user alone."""
    fake_server.script(call("bash", {"command": "echo live"}), say("done"))
    args = ink_args(fake_server, "openai", "--output-format", "stream-json", "--allow", "bash", "go")
    done = run_ink(args, ink_env(tmp_path), project)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    types = [e["type"] for e in events]
    update = next(e for e in events if e["type"] == "tool_update")
    assert (
        update["output"] == "live\n"
        and update["toolCallId"] == events[types.index("tool_start")]["toolCallId"]
    )
    assert types.index("tool_start") < types.index("tool_update") < types.index("tool_end")
    end = events[types.index("tool_end")]
    assert end["result"]["details"] == [
        {"exitCode": 0, "timedOut": False, "interrupted": False, "type": "exit_status"}
    ]
    sent = json.dumps(fake_server.requests[1].body)
    assert "exit_status" not in sent and "live\\n[exit code 0]" in sent  # the model gets the text only


def test_sigint_arrives_even_when_the_parent_blocked_it(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    """A blocked signal mask is inherited across exec (a Ray worker blocks SIGINT): ink unblocks it, so the
    interrupt still aborts the run (R17) instead of staying pending forever."""
    gate = Gate()
    fake_server.script(Reply([text("partial "), gate, text("never sent")]))
    block = lambda: signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})  # noqa: E731
    args = [*INK, *ink_args(fake_server, "openai", "go slowly")]
    proc = subprocess.Popen(
        args,
        env=ink_env(tmp_path),
        cwd=project,
        preexec_fn=block,
        text=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        gate.wait_reached()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        gate.open()
        proc.kill()
    assert proc.returncode == 130, err


def test_piped_text_goes_after_the_prompt(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    """``git diff | ink -p "review this"``: the prompt, then the piped text, in one user message."""
    fake_server.script(say("reviewed"))
    args = ink_args(fake_server, "openai", "review this")
    done = run_ink(args, ink_env(tmp_path), project, stdin="+ added line\n")
    assert (done.returncode, done.stdout) == (0, "reviewed\n")
    assert fake_server.requests[0].user_texts() == ["review this\n\n+ added line\n"]
    helped = run_ink(["--help"], ink_env(tmp_path), project)
    assert "piped on stdin goes after the prompt" in " ".join(helped.stdout.split())


def test_stream_json_carries_the_cost_the_ui_shows(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    """One price per reply, set where the reply is assembled: message_end and run_end carry it."""
    fake_server.script(call("ls", {}, id="c1"), say("done"))
    args = ink_args(fake_server, "openai", "--model", "gpt-4.1", "--output-format", "stream-json", "go")
    done = run_ink(args, ink_env(tmp_path), project)
    events = [json.loads(line) for line in done.stdout.splitlines()]
    per_reply = [e["usage"]["costUsd"] for e in events if e["type"] == "message_end"]
    # 10 input tokens at $2.00 and 5 output tokens at $8.00 per million, each reply
    assert per_reply == [pytest.approx(60 / 1e6)] * 2
    [end] = [e for e in events if e["type"] == "run_end"]
    assert end["usage"]["costUsd"] == pytest.approx(120 / 1e6)


def test_a_model_without_known_prices_has_an_unknown_cost_not_zero(
    fake_server: FakeModelServer, project: Path, tmp_path: Path
) -> None:
    fake_server.script(say("hi"))
    args = ink_args(
        fake_server, "openai", "--model", "my-local-model", "--output-format", "stream-json", "go"
    )
    done = run_ink(args, ink_env(tmp_path), project)
    [end] = [json.loads(line) for line in done.stdout.splitlines() if '"run_end"' in line]
    assert end["usage"]["costUsd"] is None
