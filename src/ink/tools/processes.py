"""Every process ink starts, and how to end them all (R35).

Each command runs as the leader of its own session and process group, with a unique token in its
environment (``INK_PROCESS_TOKEN``) that its descendants inherit. Ending an entry means finding its whole
tree, then SIGTERM to every group and process found, SIGKILL after the kill delay to whatever is left,
and reporting what is still alive as a ``Survivor``. The tree is found three ways, because each misses
something: the process group (misses ``setsid`` escapees), the leader's descendants (miss orphans that
were re-parented), and the environment token (misses processes that cleared their environment). What
all three miss (a detached, environment-less orphan) is re-parented to ink itself, the subreaper
(``ink.tools.orphans``): claimed by the entry it escaped from, or ended with everything on abort and exit.
With ink the subreaper, all three ways look only among ink's own descendants (``ink.tools.proctree``):
nothing a command starts can be anywhere else. Without it, they look at every process of the system.

Signals go only to processes proven ours (token, recorded pid with its start time, or a live group
leader with its start time), so a recycled pid or group id is never hit.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
import uuid
from collections.abc import Iterable
from typing import TYPE_CHECKING

import msgspec

from ink.lazy import lazy_module
from ink.tools import orphans, proctree

if TYPE_CHECKING:
    import psutil
else:
    psutil = lazy_module("psutil")  # ~9 ms: loaded when a living process is searched or signalled

TOKEN_ENV = orphans.TOKEN_ENV  # "INK_PROCESS_TOKEN"
DEFAULT_KILL_DELAY = 0.5
MAX_KILL_DELAY = 2.0
KILL_CONFIRM_SECONDS = 1.0
"""How long to wait for SIGKILL to take effect before reporting survivors."""
_POLL = 0.002  # while waiting for signalled processes to go: idle follows within a poll
_FIRST_POLL = 0.00025
_EXEC_RETRIES = 3
_EXEC_RETRY_SECONDS = 0.002
_PRUNE_ABOVE = 64


class Survivor(msgspec.Struct, frozen=True):
    """A process that could not be ended: it is still running, and the user must be told."""

    pid: int
    command: str
    reason: str


class ProcessEntry(msgspec.Struct):
    """One started command. ``seen`` maps descendant pids to their start times, recorded by snapshots."""

    pid: int
    command: str
    token: str
    create_time: float | None
    seen: dict[int, float] = msgspec.field(default_factory=dict)

    @property
    def pgid(self) -> int:
        return self.pid  # started with start_new_session: the leader's pid is the group id


class Termination(msgspec.Struct, frozen=True):
    """What ending some entries did. ``signal_name`` is the strongest signal that was needed."""

    signal_name: str | None
    survivors: tuple[Survivor, ...]


class ProcessRegistry:
    """The processes of one ink session. Not thread-safe: use it from the event loop's thread.

    An entry stays after its command exits, since background children may live on; it is forgotten once
    ``terminate`` proves its tree dead, or by ``prune`` (run automatically when entries pile up).
    """

    def __init__(self) -> None:
        self._entries: list[ProcessEntry] = []

    @staticmethod
    def new_token() -> str:
        return uuid.uuid4().hex

    def register(self, pid: int, command: str, token: str) -> ProcessEntry:
        """Record a just-started process (the leader of its own group, carrying ``token``)."""
        if len(self._entries) >= _PRUNE_ABOVE:
            self.prune()
        orphans.own_child(pid)  # started by ink (a command, an MCP server): never taken for an orphan
        entry = ProcessEntry(pid, command, token, proctree.start_time(pid))
        self._entries.append(entry)
        return entry

    @property
    def entries(self) -> tuple[ProcessEntry, ...]:
        return tuple(self._entries)

    def snapshot(self, entry: ProcessEntry) -> None:
        """Record the leader's current descendants, so orphans that cleared the token are still found."""
        try:
            leader = _verified(entry.pid, entry.create_time)
            if leader is None:
                children = []
            elif proctree.available():  # born after the leader and below it now: not a recycled pid
                children = _processes(proctree.descendants(leader.pid))
            else:
                children = leader.children(recursive=True)
        except psutil.Error:
            return
        for child in children:
            started = proctree.start_time(child.pid)
            if started is not None:
                entry.seen[child.pid] = started

    def alive(self, entries: Iterable[ProcessEntry] | None = None) -> list[psutil.Process]:
        """The living processes of ``entries`` (default: all), zombies excluded."""
        return _living(_find_tree(list(self._entries if entries is None else entries)))

    def prune(self) -> None:
        """Forget entries none of whose processes is alive any more."""
        living_tokens = set()
        for proc in _living(_find_tree(self._entries)):
            living_tokens.add(_token_of(proc))
        self._entries = [
            e
            for e in self._entries
            if e.token in living_tokens or _verified(e.pid, e.create_time) is not None or _seen_alive(e)
        ]

    def claim_orphans(self, entry: ProcessEntry) -> None:
        """At the end of ``entry``'s command: make the orphans that appeared meanwhile its own, and reap
        the ones that already ended."""
        orphans.reap()
        orphans.claim(entry.seen)

    async def terminate(
        self, entries: Iterable[ProcessEntry], kill_delay: float, *, with_orphans: bool = False
    ) -> Termination:
        """TERM, then after ``kill_delay`` (capped at 2 s) KILL, every process of ``entries``' trees
        (and with ``with_orphans`` every unclaimed orphan, ``ink.tools.orphans``).

        Returns the strongest signal used and the survivors. Entries whose processes are all gone are
        forgotten; entries with survivors stay registered. Ended orphans are reaped. Bounded: at most the
        kill delay plus ``KILL_CONFIRM_SECONDS``. On cancellation, what was signalled stays signalled.
        """
        chosen = list(entries)
        kill_delay = min(max(kill_delay, 0.0), MAX_KILL_DELAY)
        known = _living(_known_members(chosen) + (orphans.unclaimed() if with_orphans else []))
        _signal_all(known, signal.SIGTERM)  # their groups at once, before the slower full scan (R35)
        targets = _find_tree(chosen, with_orphans)
        if not known and not _living(targets):
            self._forget(chosen)
            orphans.reap()
            return Termination(None, ())
        _signal_all(targets, signal.SIGTERM)
        remaining = await _wait_gone(targets, kill_delay)
        used = "SIGTERM"
        again = _living(_find_tree(chosen, with_orphans))  # also children forked meanwhile, or missed
        if remaining or again:
            used = "SIGKILL"
            targets = again
            _signal_all(targets, signal.SIGKILL)
            remaining = await _wait_gone(targets, KILL_CONFIRM_SECONDS)
        orphans.reap()
        survivors = tuple(_survivor(proc, used) for proc in remaining)
        if not survivors:
            self._forget(chosen)
        return Termination(used, survivors)

    def forget_ended(self, entry: ProcessEntry) -> bool:
        """Forget ``entry`` if nothing of it is left, found without a scan of the system (and so without
        psutil, ~30 ms of CPU to import on a run that needs nothing else of it): its leader has exited and
        was reaped by whoever started it, its process group is empty, and no descendant seen is alive. A
        descendant that left the group (``setsid``) was re-parented to ink, the subreaper, and is ended
        with the orphans. Returns whether it was forgotten (when not, ``terminate`` it)."""
        if proctree.start_time(entry.pid) is not None:  # alive, or a zombie not reaped yet
            return False
        try:
            os.killpg(entry.pgid, 0)
            return False  # someone is still in its group
        except ProcessLookupError:
            pass
        except PermissionError:
            return False
        if any(proctree.start_time(pid) == started for pid, started in entry.seen.items()):
            return False
        self._forget([entry])
        return True

    async def terminate_all(
        self, kill_delay: float = DEFAULT_KILL_DELAY, *, with_orphans: bool = True
    ) -> list[Survivor]:
        """End every registered process tree and (``with_orphans``) every unclaimed orphan, on abort and on
        exit. A registry that shares its process with others (one per ``ink batch`` task) leaves the
        unclaimed orphans, which may be another's, to a last sweep. Returns the survivors, if any."""
        result = await self.terminate(list(self._entries), kill_delay, with_orphans=with_orphans)
        return list(result.survivors)

    def kill_all_now(self) -> None:
        """SIGKILL every registered tree at once, without waiting: for the forced exit (R21).

        Unlike a bare ``killpg`` of each recorded group id, only processes proven ours are hit, so a
        group id recycled since a command ended is safe.
        """
        _signal_all(_find_tree(self._entries, with_orphans=True), signal.SIGKILL)

    def kill_now(self, entries: Iterable[ProcessEntry]) -> None:
        """SIGKILL the trees of ``entries`` without waiting (they stay registered, to be reported)."""
        _signal_all(_find_tree(list(entries)), signal.SIGKILL)

    def release(self, entry: ProcessEntry) -> None:
        """Hand ``entry`` to another owner (a command sent to the background becomes a job, R43): it is
        no longer ended with this registry's trees. The orphans it claimed stay claimed by it."""
        self._forget([entry])

    def _forget(self, entries: list[ProcessEntry]) -> None:
        self._entries = [e for e in self._entries if all(e is not c for c in entries)]


def _verified(pid: int, create_time: float | None) -> psutil.Process | None:
    """The process ``pid`` if it is still the one that started at ``create_time`` (``proctree.start_time``;
    not a recycled pid). One that is gone costs no psutil: it is only loaded for a process that lives."""
    if create_time is None or proctree.start_time(pid) != create_time:
        return None
    try:
        proc = psutil.Process(pid)
    except psutil.Error:
        return None
    # the pid may have been reused before psutil read it: psutil's object is the process checked again
    return proc if proctree.start_time(pid) == create_time else None


def _seen_alive(entry: ProcessEntry) -> bool:
    return any(_verified(pid, created) is not None for pid, created in entry.seen.items())


def _token_of(proc: psutil.Process) -> str | None:
    """The process's ink token; "" when its environment reads empty (``env -i``, or in mid-``exec``)."""
    if _PROC_ENVIRON:
        return _token_in_proc(proc.pid)
    try:
        environ = proc.environ()
    except (psutil.Error, OSError):
        return None
    return environ.get(TOKEN_ENV) if environ else ""


_PROC_ENVIRON = os.path.exists(f"/proc/{os.getpid()}/environ")
_TOKEN_KEY = b"\0" + TOKEN_ENV.encode() + b"="


def _token_in_proc(pid: int) -> str | None:
    """``_token_of`` from ``/proc`` directly: every process of the system is read on each scan, and
    psutil decodes and splits each whole environment into a dict (about 3x the cost) for one variable.
    Like that dict, the last definition of the variable wins."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as file:
            data = file.read()
    except OSError:
        return None
    if not data:
        return ""
    at = (b"\0" + data).rfind(_TOKEN_KEY)
    if at < 0:
        return None
    start = at + len(_TOKEN_KEY) - 1
    end = data.find(b"\0", start)
    return data[start : end if end >= 0 else len(data)].decode("utf-8", "surrogateescape")


def _tokened(everyone: list[psutil.Process], tokens: set[str]) -> list[psutil.Process]:
    """The processes carrying one of ``tokens``. A process caught in the middle of ``exec`` shows an
    empty environment for an instant, so empty ones are read again a few times before giving up."""
    found, unsure = [], []
    for proc in everyone:
        token = _token_of(proc)
        if token in tokens:
            found.append(proc)
        elif token == "" and not _is_zombie(proc):  # a zombie has no environment, and nothing to end
            unsure.append(proc)
    for _ in range(_EXEC_RETRIES):
        if not unsure:
            break
        time.sleep(_EXEC_RETRY_SECONDS)  # bounded: a few ms, only while an empty environment is seen
        tokens_now = [(proc, _token_of(proc)) for proc in unsure]
        found += [proc for proc, token in tokens_now if token in tokens]
        unsure = [proc for proc, token in tokens_now if token == ""]
    return found


def _find_tree(entries: list[ProcessEntry], with_orphans: bool = False) -> list[psutil.Process]:
    """Every process provably belonging to ``entries``: by token, recorded pid, leader, group, descent;
    with ``with_orphans`` also the unclaimed orphans and their descendants."""
    seeds = _known_members(entries) + (orphans.unclaimed() if with_orphans else [])
    if not entries and not seeds:
        return []
    tokens = {e.token for e in entries}
    found = {proc.pid: proc for proc in seeds}
    own, everyone = _candidates()
    # the seeds are ours already: no token to read (one being ended may show an empty environment)
    found.update((p.pid, p) for p in _tokened([p for p in everyone if p.pid not in found], tokens))
    groups = {pgid for pgid in map(_pgid, found.values()) if pgid is not None} - {os.getpgrp()}
    found.update((p.pid, p) for p in everyone if _pgid(p) in groups)
    found.update(_descendants(list(found.values()), everyone, own))
    return list(found.values())


def _candidates() -> tuple[set[int], list[psutil.Process]]:
    """ink and its ancestors (never ours to end), and every other process that may be ours. Where ink is
    the subreaper and the kernel lists children, that is ink's own descendants: whatever a command
    starts stays below ink (re-parented to it at worst, ``ink.tools.orphans``), so the search reads a
    few processes instead of every process of the system. Elsewhere it is every process."""
    if orphans.active() and proctree.available():
        return {os.getpid()}, _processes(proctree.descendants(os.getpid()))
    own = {os.getpid(), *(p.pid for p in psutil.Process().parents())}
    return own, [p for p in psutil.process_iter() if p.pid not in own]


def _processes(pids: Iterable[int]) -> list[psutil.Process]:
    found = []
    for pid in pids:
        try:
            found.append(psutil.Process(pid))
        except psutil.Error:
            pass  # ended since it was listed
    return found


def _descendants(
    roots: list[psutil.Process], everyone: list[psutil.Process], own: set[int]
) -> dict[int, psutil.Process]:
    """Every descendant of ``roots``, as ``Process.children(recursive=True)`` finds them (a child older
    than its root is a recycled pid, not a child), from one parent map of ``everyone``: ``children``
    reads every process's parent again for each root, a whole-system pass per root on the abort path."""
    children: dict[int, list[psutil.Process]] = {}
    for proc in everyone:
        try:
            children.setdefault(proc.ppid(), []).append(proc)
        except psutil.Error:
            pass
    found: dict[int, psutil.Process] = {}
    for root in roots:
        try:
            born = root.create_time()
        except psutil.Error:
            continue
        seen, stack = set(), [root.pid]
        while stack:
            pid = stack.pop()
            if pid in seen:  # pids recycled while the map was read can make a cycle
                continue
            seen.add(pid)
            for child in children.get(pid, ()):
                try:
                    if born <= child.create_time():
                        stack.append(child.pid)
                        if child.pid not in own:
                            found[child.pid] = child
                except psutil.Error:
                    pass
    return found


def _known_members(entries: list[ProcessEntry]) -> list[psutil.Process]:
    """The leaders and recorded descendants of ``entries`` that are still the processes we started:
    cheap to find (no scan of the whole system), so they can be signalled first."""
    known = []
    for entry in entries:
        for pid, created in [(entry.pid, entry.create_time), *entry.seen.items()]:
            proc = _verified(pid, created)
            if proc is not None:
                known.append(proc)
    return known


def _pgid(proc: psutil.Process) -> int | None:
    try:
        return os.getpgid(proc.pid)
    except OSError:
        return None


def _is_zombie(proc: psutil.Process) -> bool:
    try:
        return bool(proc.status() == psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return True  # gone altogether


def _is_alive(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _living(procs: Iterable[psutil.Process]) -> list[psutil.Process]:
    return [p for p in procs if _is_alive(p)]


def _signal_all(procs: list[psutil.Process], sig: signal.Signals) -> None:
    """Signal each process and each of their groups (a group catches members the scan raced with)."""
    own_group = os.getpgrp()
    groups = {_pgid(p) for p in _living(procs)} - {None, own_group}
    for pgid in groups:
        try:
            os.killpg(pgid, sig)  # type: ignore[arg-type]
        except OSError:
            pass
    for proc in procs:
        try:
            proc.send_signal(sig)  # psutil checks the pid was not recycled
        except psutil.Error:
            pass


async def _wait_gone(procs: list[psutil.Process], timeout: float) -> list[psutil.Process]:
    """Poll until every process has exited (zombies count as gone) or ``timeout``; return the living.
    The first polls come quickly (a signalled process usually goes within a fraction of a millisecond),
    then every ``_POLL``."""
    deadline = time.monotonic() + timeout
    remaining = _living(procs)
    pause = _FIRST_POLL
    while remaining and time.monotonic() < deadline:
        await asyncio.sleep(pause)
        pause = min(pause * 2, _POLL)
        remaining = _living(remaining)
    return remaining


def _survivor(proc: psutil.Process, used: str) -> Survivor:
    try:
        command = " ".join(proc.cmdline()) or proc.name()
    except psutil.Error:
        command = "?"
    return Survivor(proc.pid, command, f"still alive after {used}")
