"""Where ink's children live: below ink while it runs, and not after it (R35). Linux; elsewhere no-ops.

Two kernel features, both set up here:

- **ink is the child subreaper from its first moment** (``become_subreaper``, the first thing the ``ink``
  and ``ink batch`` executables do, before any child can exist): a descendant whose parent exits, an MCP
  server's ``setsid env -i`` grandchild say, is re-parented to ink instead of init, where
  ``ink.tools.orphans`` finds, ends and reaps it. Only the executables turn it on: a process that merely
  imports ink (a test runner) keeps its orphans going to init as before.
- **every session leader ink starts dies with ink** (``leader_preexec``, run in the child between fork
  and exec): ``prctl(PR_SET_PDEATHSIG)`` has the kernel signal the leader when ink dies, even by SIGKILL,
  when no code of ink is left to end its trees. The child then checks its parent is still the ink that
  forked it: if ink died before the prctl, it signals itself. The kernel sends the signal when the
  *thread* that forked the child ends, not the process: start leaders from the event loop's thread or
  the main thread (ink's loop runs there), never from a short-lived worker thread.

The signal is SIGKILL for commands, servers and git (nothing is left to finish their ending), SIGTERM for
a child ink that can end its own trees (``ink batch``'s ``ink -p`` runs: SIGTERM is their interrupt). A
leader's own children do not die with it: they are its business, as they would be at a terminal.

``leader_preexec(steps=...)`` runs further steps in the child after the signal is set (a sandbox's
``restrict_self``, say), in order. Every step runs in a forked copy of a threaded process: it must not
import, allocate locks or take any another thread may have held (ctypes calls prepared beforehand are
fine).
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Sequence

PR_SET_PDEATHSIG = 1  # linux/prctl.h
PR_SET_CHILD_SUBREAPER = 36
_LINUX = sys.platform.startswith("linux")

Preexec = Callable[[], None]


class _State:
    prctl: Callable[..., int] | None = None
    subreaper = False


_state = _State()


def _prctl() -> Callable[..., int] | None:
    """libc's ``prctl``, loaded once in the parent (a child between fork and exec must not load it)."""
    if _state.prctl is None and _LINUX:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        _state.prctl = libc.prctl
    return _state.prctl


def become_subreaper() -> bool:
    """Make this process the child subreaper (Linux). True when it is. Idempotent."""
    prctl = _prctl()
    if prctl is not None and not _state.subreaper:
        _state.subreaper = prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    return _state.subreaper


def is_subreaper() -> bool:
    """Whether ``become_subreaper`` made this process the subreaper: every descendant stays below it."""
    return _state.subreaper


def leader_preexec(death_signal: int = signal.SIGKILL, steps: Sequence[Preexec] = ()) -> Preexec | None:
    """A ``preexec_fn`` for a session leader ink starts: ``death_signal`` when ink dies, then ``steps``.
    None where there is nothing to do (not Linux, no steps): ``subprocess`` then keeps its fast spawn."""
    prctl = _prctl()
    if prctl is None and not steps:
        return None
    parent = os.getpid()

    def in_the_child() -> None:
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, death_signal, 0, 0, 0)
            if os.getppid() != parent:  # ink died before the prctl: nobody would send the signal now
                os.kill(os.getpid(), death_signal)
        for step in steps:
            step()

    return in_the_child
