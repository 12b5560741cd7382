"""A long-lived ink (``--mode rpc``) ends and reaps escaped descendants on abort (issue 11; R34, R35):
killed, reaped (not even a zombie left), and no survivor in the receipt. The print-mode variants are in
tests/cli/test_escaped_processes.py."""

from __future__ import annotations

from pathlib import Path

import psutil

from tests.cli.test_escaped_processes import YOLO, escape, escaped_pid
from tests.fakeserver import FakeModelServer, call, say
from tests.processes import kill_tree
from tests.rpc.conftest import StartRpc


def truly_gone(pid: int) -> bool:
    """Exited and reaped: not even a zombie is left."""
    try:
        psutil.Process(pid)
    except psutil.NoSuchProcess:
        return True
    return False


def test_a_long_lived_ink_ends_and_reaps_escapees_on_abort(
    fake_server: FakeModelServer, start_rpc: StartRpc, project: Path
) -> None:
    """Ink keeps running after the abort: the escapees are killed and reaped (no zombie), the receipt
    names no survivor, and an escapee that ended by itself is reaped too."""
    quick = "(setsid env -i sh -c 'echo $$ > quick.pid' &)"
    command = f"{quick}; {escape('setsid-env-i-quiet')}; {escape('grandchild')}; sleep 1000"
    fake_server.script(call("bash", {"command": command}), say("not reached"))
    ink = start_rpc(*YOLO)
    ink.ok("prompt", text="start it")
    pids = [escaped_pid(project, name) for name in ("quick", "setsid-env-i-quiet", "grandchild")]
    try:
        ink.ok("abort")
        end = ink.wait_event("run_end")
        assert end["stopReason"] == "aborted"
        assert not end["receipt"].get("survivors"), end["receipt"]
        assert all(truly_gone(pid) for pid in pids), [psutil.Process(p) for p in pids if not truly_gone(p)]
        assert psutil.Process(ink.proc.pid).is_running(), "ink itself lives on"
    finally:
        for pid in pids:
            kill_tree(pid)
