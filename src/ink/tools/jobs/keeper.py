"""The keeper of one background job: a small process between ink and the job's command (R35, R43).

Run as a script, never imported by ink (``python -I -S keeper.py KILL_DELAY STATUS_FD -- ARGV...``):
it imports nothing of ink, so it starts in a few milliseconds with the standard library only. It is the
session leader ink starts for the job (with ink's parent-death signal, SIGTERM, and in the sandbox when
the job is), and it:

- becomes the child subreaper: every descendant of the command, however it escapes (``setsid``, a double
  fork, ``env -i``), is re-parented to the keeper when its parent ends, so the whole tree stays below it;
- runs ``ARGV`` as its child, and waits until the tree is empty: the job runs as long as anything it
  started runs (a command that leaves a server behind with ``&`` is still a running job);
- on SIGTERM, SIGINT or SIGHUP (ink's kill, or ink's death: the parent-death signal) ends the whole tree:
  SIGTERM to every descendant, SIGKILL after ``KILL_DELAY`` seconds to what is left, then exits. So a
  kill -9 of ink still ends every job with its tree: the keeper outlives ink only by the kill delay;
- writes one JSON line on ``STATUS_FD`` when the command itself ends (``{"main": ...}``) and one when the
  job ends (``{"end": ...}``): the command's exit code or the signal that ended it, the strongest signal
  the keeper sent, and the processes it could not end (survivors), then exits 0.

Linux: the descendants are read from ``/proc/PID/task/TID/children``. Elsewhere the keeper cannot be the
subreaper and signals its process group instead.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
END_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
WATCHED = (signal.SIGCHLD, *END_SIGNALS)
KILL_CONFIRM = 1.0  # seconds to wait for SIGKILL to take effect before naming survivors
POLL = 0.005  # between looks at the tree while it ends; a child's end wakes the keeper sooner
SAFETY_WAKE = 1.0  # sigtimedwait's timeout: a lost SIGCHLD can only delay the end this long


class Keeper:
    def __init__(self, kill_delay: float, status_fd: int) -> None:
        self.kill_delay = min(max(kill_delay, 0.0), 2.0)
        self.status_fd = status_fd
        self.main_pid = 0
        self.main_status: int | None = None
        self.proc = os.path.isdir(f"/proc/{os.getpid()}/task")

    # -- starting ----------------------------------------------------------------------------------

    def start(self, argv: list[str]) -> None:
        _become_subreaper()
        signal.pthread_sigmask(signal.SIG_BLOCK, WATCHED)  # taken with sigtimedwait, never by a handler
        pid = os.fork()
        if pid == 0:  # the command: plain signals, ink's output, no status pipe
            try:
                signal.pthread_sigmask(signal.SIG_SETMASK, [])
                for ignored in (signal.SIGPIPE, signal.SIGXFSZ):  # as subprocess's restore_signals
                    signal.signal(ignored, signal.SIG_DFL)
                os.execvp(argv[0], argv)
            except OSError as exc:
                os.write(2, f"ink: cannot run {argv[0]}: {exc.strerror}\n".encode())
            os._exit(127)
        self.main_pid = pid
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 1)  # the output pipe is the command's: its end-of-file must not wait for the keeper
        os.dup2(null, 2)
        os.close(null)

    # -- waiting -----------------------------------------------------------------------------------

    def run(self) -> None:
        """Wait until the tree is empty or an end is asked for; then report and return."""
        while True:
            if self._reap():  # no child left: as the subreaper, no descendant either
                self._report(None, ())
                return
            try:
                info = signal.sigtimedwait(WATCHED, SAFETY_WAKE)
            except InterruptedError:
                continue
            if info is not None and info.si_signo in END_SIGNALS:
                sent, survivors = self.end_tree()
                self._report(sent, survivors)
                return

    def _reap(self) -> bool:
        """Collect every ended child; True when no child is left at all."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return True
            if pid == 0:
                return False
            if pid == self.main_pid:
                self.main_status = status
                self._write({"main": self._main()})

    # -- ending ------------------------------------------------------------------------------------

    def end_tree(self) -> tuple[str | None, list[tuple[int, str]]]:
        """SIGTERM to the whole tree, SIGKILL after the kill delay to what is left; the survivors.
        Processes forked meanwhile are signalled as they appear."""
        signalled: set[int] = set()
        sent = "SIGTERM" if self._signal(signal.SIGTERM, signalled) else None
        deadline = time.monotonic() + self.kill_delay
        while not self._gone() and time.monotonic() < deadline:
            self._signal(signal.SIGTERM, signalled)
            _pause()
        if not self._gone():
            sent = "SIGKILL"
            deadline = time.monotonic() + KILL_CONFIRM
            while not self._gone() and time.monotonic() < deadline:
                self._signal(signal.SIGKILL, set())
                _pause()
        return sent, [(pid, _command(pid)) for pid in self._living()]

    def _gone(self) -> bool:
        no_children = self._reap()
        return no_children or (self.proc and not self._living())

    def _living(self) -> list[int]:
        return [pid for pid in self.descendants() if not _zombie(pid)] if self.proc else []

    def _signal(self, sig: int, skip: set[int]) -> bool:
        """Send ``sig`` to every living descendant not in ``skip`` (which grows); True if any was found."""
        if not self.proc:  # no /proc: the process group, the keeper's own signals being blocked
            try:
                os.kill(-os.getpgrp(), sig)
            except OSError:
                return False
            return True
        living = self._living()
        for pid in living:
            if pid not in skip:
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
        skip.update(living)
        return bool(living)

    def descendants(self) -> list[int]:
        found: list[int] = []
        stack = [os.getpid()]
        seen = set(stack)
        while stack:
            for child in _children(stack.pop()):
                if child not in seen:
                    seen.add(child)
                    found.append(child)
                    stack.append(child)
        return found

    # -- reporting ---------------------------------------------------------------------------------

    def _main(self) -> dict[str, object]:
        status = self.main_status
        if status is None:
            return {"exit": None, "signal": None}
        if os.WIFSIGNALED(status):
            return {"exit": None, "signal": signal.Signals(os.WTERMSIG(status)).name}
        return {"exit": os.waitstatus_to_exitcode(status), "signal": None}

    def _report(self, sent: str | None, survivors: list[tuple[int, str]] | tuple[()]) -> None:
        self._write({"end": {**self._main(), "sent": sent, "survivors": [list(s) for s in survivors]}})

    def _write(self, record: dict[str, object]) -> None:
        try:
            os.write(self.status_fd, (json.dumps(record) + "\n").encode())
        except OSError:
            pass  # ink is gone: nobody reads the status, the tree is still ended


def _pause() -> None:
    """Up to ``POLL`` seconds, less when a child ends (SIGCHLD is blocked: it waits, pending, for this)."""
    try:
        signal.sigtimedwait([signal.SIGCHLD], POLL)
    except InterruptedError:
        pass


def _become_subreaper() -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # without it escapees go to ink, which ends them as orphans (ink.tools.orphans)


def _children(pid: int) -> list[int]:
    """``ink.tools.proctree.children``, which a script that imports nothing of ink cannot use."""
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    found: list[int] = []
    for thread in threads:
        try:
            with open(f"/proc/{pid}/task/{thread}/children", "rb") as file:
                found.extend(int(p) for p in file.read().split())
        except (OSError, ValueError):
            continue
    return found


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            stat = file.read()
    except OSError:
        return True  # gone
    return stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3] in (b"Z", b"X")


def _command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as file:
            return file.read(200).replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except OSError:
        return "?"


def main(argv: list[str]) -> int:
    try:
        kill_delay, status_fd, separator, *command = float(argv[1]), int(argv[2]), argv[3], *argv[4:]
    except (IndexError, ValueError):
        separator, command = "", []
    if separator != "--" or not command:
        os.write(2, b"usage: keeper.py KILL_DELAY STATUS_FD -- COMMAND...\n")
        return 2
    os.set_inheritable(status_fd, False)  # the command must not hold the status pipe open
    keeper = Keeper(kill_delay, status_fd)
    keeper.start(command)
    keeper.run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
