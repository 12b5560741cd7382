"""What a run left in the files it changed, fixed before its ``run_end`` goes out.

The snapshot at a run's end is staged after its ``run_end`` (an abort's ``run_end`` must not wait for
it), and from ``run_end`` on the user may edit. So just before ``run_end``, the files the run changed
(the listing every snapshot starts with) are *pinned*: what git will store for each of them, computed
here (git's blob id of the bytes, and the mode), or, past a budget, their ``lstat`` fingerprint. Once
the snapshot is staged, ``touched`` names every path whose staged state is not its pin, and every path
the snapshot holds changed that the run did not list: those changed after the run ended, and a rewind
names them before it overwrites anything (R42).

A fingerprint (device, inode, size, mode, ctime and mtime in ns) proves nothing changed only when its
times are older than the moment it was taken by more than a file system's clock step: a write in the
same step can leave all of them equal. Such a recent file past the budget counts as touched (a rewind
asks about it; it is never silently taken for the run's).
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

import msgspec

from ink.checkpoints.writeback import EXECUTABLE, REGULAR, SYMLINK
from ink.regular_file import read_regular

FEW_FILES = 64  # this many are pinned in the event loop (an abort's run_end waits); more in a thread
HASH_FILES = 4096  # this many changed files are pinned by their bytes (read before run_end) ...
HASH_BYTES = 64 * 1024 * 1024  # ... up to this many bytes in all; the others by their fingerprint
RECENT_NS = 100_000_000  # a time this close to the pin's own may share a clock step with a later write
COARSE_RECENT_NS = 2_000_000_000  # the same, on a file system that keeps whole seconds (ext3, FAT, HFS+)
ABSENT = "absent"
UNKNOWN = "unknown"


class Pin(msgspec.Struct, frozen=True, array_like=True):
    """``blob``: git's id of the content, with ``mode`` (git's); or ``ABSENT`` (git stores nothing
    there: deleted, or no file git keeps); or ``UNKNOWN`` (could not be read: counts as touched); or a
    fingerprint (``blob`` empty)."""

    blob: str
    mode: int = 0
    fingerprint: tuple[int, ...] = ()


def pin(
    root: Path, paths: Iterable[str], *, sha256: bool = False, files: int = HASH_FILES, size: int = HASH_BYTES
) -> dict[str, Pin]:
    """Pins of ``paths`` (relative to ``root``), read now: the first ``files`` of at most ``size`` bytes in
    all by their content. ``sha256``: the store's objects are named so."""
    started = time.time_ns()
    budget_files, budget_bytes = files, size
    pins: dict[str, Pin] = {}
    for rel in paths:
        try:
            info = os.lstat(root / rel)
        except FileNotFoundError:
            pins[rel] = Pin(ABSENT)
            continue
        except OSError:
            pins[rel] = Pin(UNKNOWN)
            continue
        if not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
            pins[rel] = Pin(ABSENT)  # a folder, a FIFO, a socket: git stores no blob there
        elif budget_files > 0 and info.st_size <= budget_bytes:
            budget_files -= 1
            budget_bytes -= info.st_size
            pins[rel] = _content(root / rel, info, sha256)
        elif _recent(info, started):
            pins[rel] = Pin(UNKNOWN)
        else:
            pins[rel] = Pin("", fingerprint=fingerprint(info))
    return pins


def touched(
    root: Path,
    pins: Mapping[str, Pin],
    staged: Mapping[str, tuple[int, str] | None],
) -> list[str]:
    """Paths whose staged state is not what the run left. ``staged``: every path that differs between
    the snapshot before and the one staged now, with its staged (mode, blob), None when removed; a
    pinned path missing from it was staged as it was before the run, so it changed back since."""
    found = {path for path in staged if path not in pins}  # changed, and not by the run
    for path, expected in pins.items():
        now = staged.get(path, ("changed back",))
        if expected.blob == UNKNOWN:
            found.add(path)
        elif expected.blob == ABSENT:
            if now is not None:
                found.add(path)
        elif expected.fingerprint:
            if now == ("changed back",) or not _same_fingerprint(root / path, expected.fingerprint):
                found.add(path)
        elif now != (expected.mode, expected.blob):
            found.add(path)
    return sorted(found)


def fingerprint(info: os.stat_result) -> tuple[int, ...]:
    return (info.st_dev, info.st_ino, info.st_mode, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def blob_id(data: bytes, *, sha256: bool = False) -> str:
    digest = hashlib.sha256() if sha256 else hashlib.sha1(usedforsecurity=False)
    digest.update(b"blob %d\0" % len(data))
    digest.update(data)
    return digest.hexdigest()


def _content(path: Path, info: os.stat_result, sha256: bool) -> Pin:
    try:
        if stat.S_ISLNK(info.st_mode):
            return Pin(blob_id(os.fsencode(os.readlink(path)), sha256=sha256), SYMLINK)
        # at most the size looked at: a file still growing (a job's log) is not read on past the budget
        read = read_regular(path, info.st_size, follow_symlinks=False)
    except OSError:  # also swapped for a FIFO or a link, or grown since the look: not the run's to pin
        return Pin(UNKNOWN)
    if read.status.st_ino != info.st_ino:
        return Pin(UNKNOWN)  # replaced between the two looks
    mode = EXECUTABLE if read.status.st_mode & stat.S_IXUSR else REGULAR
    return Pin(blob_id(read.data, sha256=sha256), mode)


def _recent(info: os.stat_result, now_ns: int) -> bool:
    whole_seconds = info.st_mtime_ns % 1_000_000_000 == 0 and info.st_ctime_ns % 1_000_000_000 == 0
    margin = COARSE_RECENT_NS if whole_seconds else RECENT_NS
    return max(info.st_mtime_ns, info.st_ctime_ns) >= now_ns - margin


def _same_fingerprint(path: Path, expected: tuple[int, ...]) -> bool:
    try:
        return fingerprint(os.lstat(path)) == expected
    except OSError:
        return False
