"""Ink as the subreaper of everything it starts, so no descendant can leave unnoticed (R35).

A command's descendant that detaches (``setsid``), clears its environment (``env -i``, losing
``INK_PROCESS_TOKEN``) and whose parent exits would be re-parented to init and be found by nothing. On
Linux the ink process is a child subreaper from its first moment (``ink.lineage.become_subreaper``,
called by the ``ink`` and ``ink batch`` executables first thing): such orphans are re-parented to ink
instead. An *orphan* is then a child of ink that ink did not start itself. Every
child ink starts in a session of its own is noted here (``own_child``): each process registered in a
``ProcessRegistry`` (commands, MCP servers) and the local model server; every other child stays in
ink's own session (``rg``, ``git``). So a child in another session that is not noted can only be an
adopted descendant. Code that starts a child with ``start_new_session`` must note it, or the child is
ended as an orphan on abort.

Only the executables turn this on: a process that merely imports ink (a test runner with its own
session-leading children) keeps its children to itself. ``enable`` does it for a process that wants it
later (a benchmark of ink's abort path, a Ray worker running batch tasks).

Orphans are claimed by the entry whose command was running when they appeared (``claim``, at the
command's end) and are then ended with it; ``unclaimed`` ones are ended with every process of the
registry (abort and exit). ``reap`` collects the exit status of orphans that ended: none stays a zombie.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ink import lineage
from ink.lazy import lazy_module
from ink.tools import proctree

if TYPE_CHECKING:
    import psutil
else:
    psutil = lazy_module("psutil")

TOKEN_ENV = "INK_PROCESS_TOKEN"  # the name ink.tools.processes gives every command (it imports this)


class _State:
    def __init__(self) -> None:
        self.leaders: set[int] = set()  # commands ink started; asyncio waits for them: never reaped here
        self.claimed: dict[int, float] = {}  # orphan pid -> its start time, once an entry owns it
        self.starting = 0  # children being started and not yet noted as ink's own


_state = _State()  # one per process, as the subreaper attribute is


def enable() -> bool:
    """Become the subreaper now, where possible (Linux); True when this process is. Before any command
    starts: an orphan of a command started earlier has gone to init already."""
    return lineage.become_subreaper()


def active() -> bool:
    """Whether ink is the subreaper now: every descendant of its commands stays below it."""
    return lineage.is_subreaper()


@contextmanager
def starting_child() -> Iterator[None]:
    """Around starting a child in a session of its own, up to ``own_child`` (``ProcessRegistry.register``).
    Until it is noted, no orphan is claimed or reaped: a child that already ended is a zombie, which shows
    no environment and so looks like an orphan, and reaping it would steal its exit status from the code
    waiting for it (asyncio then reports exit status 255)."""
    _state.starting += 1
    try:
        yield
    finally:
        _state.starting -= 1


def own_child(pid: int) -> None:
    """``pid`` is a child ink started itself in a session of its own (a command's leader, the local
    model server): someone else waits for it, and it is never taken for an orphan."""
    _state.leaders.add(pid)


def own_child_done(pid: int) -> None:
    """The child's exit status was collected by whoever started it: its pid may be reused now."""
    _state.leaders.discard(pid)


def orphans() -> list[psutil.Process]:
    """The living or dead-but-unreaped descendants of ink's commands that were re-parented to ink."""
    if not active() or _state.starting:
        return []
    own_session = os.getsid(0)
    found = []
    try:
        children = _children()
    except psutil.Error:
        return []
    for child in children:
        if child.pid in _state.leaders:
            continue
        try:
            if os.getsid(child.pid) != own_session and not _carries_token(child):
                found.append(child)
        except OSError:
            pass
    return found


def _children() -> list[psutil.Process]:
    if not proctree.available():
        return psutil.Process().children()
    found = []
    for pid in proctree.children(os.getpid()):  # ink's own lists: no read of every process of the system
        if pid in _state.leaders:
            continue  # a command's or an MCP server's leader, never an orphan: no psutil to look at it
        try:
            found.append(psutil.Process(pid))
        except psutil.Error:
            pass  # reaped since it was listed
    return found


def _carries_token(proc: psutil.Process) -> bool:
    """A child with an ink token is a command just started and not yet registered, or a descendant the
    token search finds anyway: either way not an orphan to claim. (A zombie shows no environment.)"""
    try:
        return bool(proc.environ().get(TOKEN_ENV))
    except (psutil.Error, OSError):
        return False


def unclaimed() -> list[psutil.Process]:
    """Orphans that no entry has claimed (or whose pid now names another process)."""
    return [p for p in orphans() if _state.claimed.get(p.pid) != _start_time(p)]


def claim(into: dict[int, float]) -> None:
    """Record every unclaimed orphan in ``into`` (an entry's pid -> start time of seen descendants)."""
    for proc in unclaimed():
        started = _start_time(proc)
        if started is not None:
            into[proc.pid] = started
            _state.claimed[proc.pid] = started


def reap() -> None:
    """Collect the exit status of every orphan that has ended, so it does not stay a zombie."""
    for proc in orphans():
        try:
            pid, _ = os.waitpid(proc.pid, os.WNOHANG)
        except ChildProcessError:
            pid = proc.pid
        if pid:
            _state.claimed.pop(proc.pid, None)


def _start_time(proc: psutil.Process) -> float | None:
    return proctree.start_time(proc.pid)
