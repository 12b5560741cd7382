"""Turning a ``SandboxPolicy`` into what a child applies to itself between fork and exec.

The Landlock ruleset is built in ink when the first command starts and kept open; the child only sets
no_new_privs, enters the ruleset and, with the network off, installs the seccomp filter: three system
calls, no extra program.
Everything the command starts inherits all three, detached ``setsid`` children included.

Secret folders are kept unreadable by granting reads on everything *around* them: Landlock only adds
rights, so "all of / but ~/.ssh" is a read rule on each sibling along the way (``/etc``, ``/usr``, ...,
``~/.bashrc``, ``~/projects``). The folders on the way keep listing rights only (``ls ~/.ssh`` shows
names, ``cat ~/.ssh/id_ed25519`` is refused). A folder on the way that changes (a new file in the home
folder) is seen at the next command: the ruleset is rebuilt when one of them changed since.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from ink.sandbox import landlock, seccomp
from ink.sandbox.landlock import Kernel, LandlockError, Ruleset
from ink.sandbox.policy import SandboxPolicy

READ = landlock.READ_FILE | landlock.READ_DIR | landlock.EXECUTE
WRITE = (
    READ
    | landlock.WRITE_FILE
    | landlock.REMOVE_DIR
    | landlock.REMOVE_FILE
    | landlock.MAKE_DIR
    | landlock.MAKE_REG
    | landlock.MAKE_SOCK
    | landlock.MAKE_FIFO
    | landlock.MAKE_SYM
    | landlock.REFER
    | landlock.TRUNCATE
)  # never MAKE_CHAR/MAKE_BLOCK: a device node made in the workspace would open the disk under it
DEVICE = landlock.READ_FILE | landlock.WRITE_FILE | landlock.IOCTL_DEV
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx")
TERMINALS = "/dev/pts"


class SandboxUnavailable(OSError):
    """The sandbox cannot be set up here; the message says why."""


class Confinement:
    """The prepared sandbox of one policy: ``preexec`` is what a child runs before exec, ``env`` what it
    adds to the command's environment. Thread-safe; one per policy for the life of the process."""

    def __init__(self, policy: SandboxPolicy, kernel: Kernel | None = None) -> None:
        self.policy = policy
        self._kernel = kernel or Kernel()
        self._lock = threading.Lock()
        self._ruleset: Ruleset | None = None
        self._watched: dict[str, int] = {}
        try:
            self.abi = self._kernel.abi()
        except LandlockError as exc:
            raise SandboxUnavailable(f"Landlock is not available: {exc.strerror}") from None
        self._seccomp = (
            seccomp.install_call(seccomp.network_filter())
            if not policy.network and seccomp.supported()
            else None
        )
        # The ruleset is built at the first command (``preexec``), not here: a run without one (a text
        # turn, most of a TUI session's start) never pays the walk, a system call or two per path along
        # the way to each secret folder (most of the sandbox's start-up). Landlock is known to work by
        # now (``abi``); a ruleset that still cannot be built fails that command, which then does not run
        # (R39), as a rebuild after a watched folder changed always could.

    @property
    def env(self) -> dict[str, str]:
        temporary = self.policy.temporary
        return {"TMPDIR": str(temporary)} if temporary is not None else {}

    def preexec(self) -> Callable[[], None]:
        """The function the child calls between fork and exec (``subprocess``'s ``preexec_fn``)."""
        restrict = landlock.restrict_self_call(self._current().fd)
        install = self._seccomp

        def enter() -> None:
            restrict()
            if install is not None:
                install()

        return enter

    def close(self) -> None:
        with self._lock:
            if self._ruleset is not None:
                self._ruleset.close()
                self._ruleset = None

    def _current(self) -> Ruleset:
        with self._lock:
            if self._ruleset is not None and all(_mtime(p) == t for p, t in self._watched.items()):
                return self._ruleset
            old, self._ruleset = self._ruleset, None
            try:
                self._ruleset, self._watched = self._build()
            except (LandlockError, OSError) as exc:
                raise SandboxUnavailable(f"the Landlock ruleset could not be built: {exc}") from None
            if old is not None:
                old.close()  # children started with it have entered it already
            return self._ruleset

    def _build(self) -> tuple[Ruleset, dict[str, int]]:
        policy, abi = self.policy, self.abi
        net = landlock.BIND_TCP | landlock.CONNECT_TCP if abi >= 4 and not policy.network else 0
        scoped = 0
        if abi >= 6:
            scoped = landlock.SCOPE_SIGNAL | (0 if policy.network else landlock.SCOPE_ABSTRACT_UNIX_SOCKET)
        ruleset = Ruleset(self._kernel, abi, landlock.fs_rights(abi), net, scoped)
        secrets = [str(s) for s in policy.secrets if s.exists()]
        watched = {_existing_parent(s): 0 for s in policy.secrets if not s.exists()}  # made later: rebuild
        watched = {path: _mtime(path) for path in watched}
        writable = [str(p) for p in policy.writable]
        try:
            # the read grant skips the writable folders: their own walk grants more on the same paths
            grants = [("/", READ, frozenset(writable)), *((root, WRITE, frozenset()) for root in writable)]
            for root, rights, covered in grants:
                for path, granted in _around(root, rights, secrets, watched, covered):
                    ruleset.allow_path(path, granted)
            for device in DEVICES:
                ruleset.allow_path(device, DEVICE)
            ruleset.allow_path(TERMINALS, READ | DEVICE)
        except BaseException:
            ruleset.close()
            raise
        return ruleset, watched


def _around(
    path: str, rights: int, secrets: list[str], watched: dict[str, int], covered: frozenset[str] = frozenset()
) -> Iterator[tuple[str, int]]:
    """Rules granting ``rights`` beneath ``path`` except inside ``secrets``: the folders on the way to a
    secret may only be listed, their other entries get ``rights``. Symlinks are skipped: where they lead
    is judged by its own rule. Nothing is granted beneath the ``covered`` folders: another walk with the
    same secrets grants them more (a secret inside /tmp, such as an $INK_HOME there, made the read walk
    and the write walk each add a rule for every entry of /tmp)."""
    if path in covered:
        return
    inside = [s for s in secrets if s == path or s.startswith(path.rstrip("/") + "/")]
    if not inside:
        yield path, rights
        return
    if path in inside:
        return
    yield path, rights & landlock.READ_DIR
    watched[path] = _mtime(path)
    try:
        entries = list(os.scandir(path))
    except OSError:
        return
    for entry in entries:
        if not entry.is_symlink():
            yield from _around(entry.path, rights, inside, watched, covered)


def _existing_parent(path: Path) -> str:
    while not path.exists() and path != path.parent:
        path = path.parent
    return str(path)


def _mtime(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return -1
