"""Descendants that try to leave ink unnoticed (issue 11, "Processes escape"; R34, R35).

Each variant detaches (``setsid``), drops ``INK_PROCESS_TOKEN`` (``env -i``) and lets its parent exit,
so it is re-parented; ink, the subreaper of what it starts, still ends it: when ink exits after the run,
when a run is aborted, and (in a long-lived ``ink --mode rpc``) without leaving a zombie behind.
Each escapee writes its pid to a file, then ``exec``s a long sleep; psutil checks it is gone.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.cli.inkproc import ink_env, run_ink, start_ink
from tests.fakeserver import FakeModelServer, call, say
from tests.processes import gone, kill_tree
from tests.waiting import wait_for_file

YOLO = ("--permission-mode", "yolo")
STAY = "echo $$ > {name}.pid; exec sleep 1000"
QUIET = ">/dev/null 2>&1 </dev/null"  # not holding the tool's output open: nothing waits for it
ESCAPES = {
    "setsid-env-i": "(setsid env -i sh -c '{stay}' &)",  # holds the output pipe, as in issue 11
    "setsid-env-i-quiet": f"(setsid env -i sh -c '{{stay}}' {QUIET} &)",
    "env-i-only": f"(env -i sh -c '{{stay}}' {QUIET} &)",
    "setsid-fork": f"setsid -f env -i sh -c '{{stay}}' {QUIET}",
    "grandchild": f"(setsid env -i sh -c 'sh -c \"{{stay}}\" & wait' {QUIET} &)",
    "nohup-double-fork": f"( (nohup setsid env -i sh -c '{{stay}}' {QUIET} &) &)",
}


def escape(variant: str) -> str:
    stay = STAY.format(name=variant)
    return ESCAPES[variant].format(stay=stay.replace('"', '\\"') if variant == "grandchild" else stay)


def ink_args(server: FakeModelServer, *more: str) -> list[str]:
    base = server.base_url("openai")
    return ["-p", "--no-session", "--provider", "openai", "--base-url", base, "--api-key", "k", *YOLO, *more]


def escaped_pid(project: Path, variant: str) -> int:
    return int(wait_for_file(project / f"{variant}.pid"))


@pytest.mark.parametrize("variant", list(ESCAPES))
def test_an_escaped_process_ends_when_ink_exits(
    fake_server: FakeModelServer, project: Path, tmp_path: Path, variant: str
) -> None:
    # the command waits until the escapee runs: ink may not end it while it is still starting up
    started = f"until [ -s {variant}.pid ]; do sleep 0.01; done; echo started"
    fake_server.script(call("bash", {"command": f"{escape(variant)}; {started}"}), say("done"))
    done = run_ink(ink_args(fake_server, "start it"), ink_env(tmp_path), project)
    pid = escaped_pid(project, variant)
    try:
        assert done.returncode == 0, done.stderr
        assert gone(pid), f"{variant}: pid {pid} outlived ink"
    finally:
        kill_tree(pid)


@pytest.mark.parametrize("variant", list(ESCAPES))
def test_an_escaped_process_ends_with_an_aborted_run(
    fake_server: FakeModelServer, project: Path, tmp_path: Path, variant: str
) -> None:
    command = f"{escape(variant)}; echo $$ > shell.pid; sleep 1000"
    fake_server.script(call("bash", {"command": command}), say("not reached"))
    proc = start_ink(ink_args(fake_server, "start it"), ink_env(tmp_path), project)
    try:
        pid = escaped_pid(project, variant)
        shell = int(wait_for_file(project / "shell.pid"))
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 130, err
        assert gone(shell) and gone(pid), f"{variant}: pid {pid} survived the abort"
        assert "still running" not in err
    finally:
        proc.kill()
        kill_tree(pid)
