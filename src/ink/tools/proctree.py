"""A process's descendants from the kernel's own lists of children (Linux: ``/proc/PID/task/TID/children``).

Reading them costs two small reads per process of the tree. Finding children by everyone's parent, as
``psutil.Process.children`` does, reads every process of the system: a few milliseconds per search on a
busy machine, several times over on the abort path. Where the kernel has no such lists (another system,
a kernel built without them) ``available`` is False and callers search the old way.

The lists are live kernel state, so a pid in them is a child at the moment of reading (never a recycled
pid); like any search of a changing tree, a child forked or re-parented while it is read can be missed,
which the callers' second search after signalling covers.

``start_time`` tells a process from a later one that reuses its pid: read from ``/proc`` on Linux, so a
command that starts and ends as expected never needs psutil (~9 ms to import).
"""

from __future__ import annotations

import os


def _probe() -> bool:
    me = os.getpid()
    return os.path.exists(f"/proc/{me}/task/{me}/children")


_AVAILABLE = _probe()
_PROC_STAT = os.path.exists(f"/proc/{os.getpid()}/stat")
_TICKS = os.sysconf("SC_CLK_TCK") if _PROC_STAT else 1
_STARTTIME = 19  # field 22 of /proc/PID/stat, counted from field 3, the first after the ``(comm)``


def start_time(pid: int) -> float | None:
    """When ``pid`` started (a zombie too); None when there is no such process. The same process always
    gives the same value and a process that reuses the pid a different one. The unit is this module's
    own (seconds since boot on Linux): compare only values it returned."""
    if not _PROC_STAT:
        import psutil  # not Linux: no /proc to read

        try:
            return float(psutil.Process(pid).create_time())
        except psutil.Error:
            return None
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            stat = file.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2 :].split()  # the command name may hold spaces and parentheses
    return int(fields[_STARTTIME]) / _TICKS


def available() -> bool:
    return _AVAILABLE


def children(pid: int) -> list[int]:
    """The children of ``pid``, forked by any of its threads; [] when it is gone."""
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    found: list[int] = []
    for thread in threads:
        try:
            fd = os.open(f"/proc/{pid}/task/{thread}/children", os.O_RDONLY)
        except OSError:
            continue  # the thread ended meanwhile
        try:
            data = b""
            while chunk := os.read(fd, 4096):  # one read unless the process has hundreds of children
                data += chunk
        except OSError:
            data = b""
        finally:
            os.close(fd)
        found.extend(int(pid) for pid in data.split())
    return found


def descendants(pid: int) -> list[int]:
    """Every descendant of ``pid``, parents before their children."""
    found: list[int] = []
    seen = {pid}
    stack = [pid]
    while stack:
        for child in children(stack.pop()):
            if child not in seen:
                seen.add(child)
                found.append(child)
                stack.append(child)
    return found
