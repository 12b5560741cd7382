"""The guard of a job that was a running bash call sent to the background (Ctrl+B, R43): ends its tree if
ink dies. Run as a script, never imported by ink (``python -I -S guard.py KILL_DELAY TOKEN PGID``).

A job started in the background runs under its keeper (``keeper.py``), the subreaper of its tree. A call
sent to the background was started without one, and a process cannot be given a new parent: its leader
dies with ink (ink's parent-death signal), but not its children. The guard, started when the call becomes
a job, reads ink's lines on its stdin: ``PID START`` names a process of the job (its start time, from
``/proc/PID/stat``, so a recycled pid is never hit), ``done`` says the job ended and the guard may go.
When its stdin ends without ``done``, ink is gone: the guard ends every process of the job it can find,
those in its process group ``PGID``, those whose environment carries its ``TOKEN`` (what ink gives every
command), and those it was told about: SIGTERM, SIGKILL after ``KILL_DELAY`` to what is left.

What it cannot find: a process of the job that left its group, cleared its environment and was started
after ink last told the guard about it. docs/run-control.md says so.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable

TOKEN_ENV = b"INK_PROCESS_TOKEN="
POLL = 0.005


def main(argv: list[str]) -> int:
    try:
        kill_delay, token, pgid = min(max(float(argv[1]), 0.0), 2.0), argv[2].encode(), int(argv[3])
    except (IndexError, ValueError):
        os.write(2, b"usage: guard.py KILL_DELAY TOKEN PGID\n")
        return 2
    known: dict[int, bytes] = {}
    for line in sys.stdin.buffer:
        words = line.split()
        if words == [b"done"]:
            return 0
        if len(words) == 2 and words[0].isdigit():
            known[int(words[0])] = words[1]
    end_all(lambda: _members(token, pgid, known), kill_delay)
    return 0


def end_all(find: Callable[[], set[int]], kill_delay: float) -> None:
    """SIGTERM to every process ``find()`` names, again to those that appear, SIGKILL after the delay."""
    signalled: set[int] = set()
    deadline = time.monotonic() + kill_delay
    while time.monotonic() < deadline:
        living = find()
        if not living:
            return
        _send(living - signalled, signal.SIGTERM)
        signalled |= living
        time.sleep(POLL)
    for _ in range(int(1.0 / POLL)):
        living = find()
        if not living:
            return
        _send(living, signal.SIGKILL)
        time.sleep(POLL)


def _send(pids: set[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except OSError:
            pass


def _members(token: bytes, pgid: int, known: dict[int, bytes]) -> set[int]:
    me = os.getpid()
    found: set[int] = set()
    for name in os.listdir("/proc"):
        if not name.isdecimal() or int(name) == me:
            continue
        pid = int(name)
        stat = _stat(pid)
        if stat is None or stat[0] in (b"Z", b"X"):
            continue
        if int(stat[2]) == pgid or known.get(pid) == stat[19] or _carries(pid, token):
            found.add(pid)
    return found


def _stat(pid: int) -> list[bytes] | None:
    """The fields of ``/proc/PID/stat`` after the command name: state first, start time at index 19."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            data = file.read()
    except OSError:
        return None
    return data[data.rfind(b")") + 2 :].split()


def _carries(pid: int, token: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as file:
            return TOKEN_ENV + token in file.read().split(b"\0")
    except OSError:
        return False


if __name__ == "__main__":
    sys.exit(main(sys.argv))
