"""What a sandbox mode allows: a value, the same for every command it confines (R41).

- ``workspace-write``: the workspace, the machine's temporary folders (``$TMPDIR``, ``/tmp``, and
  ``/dev/shm``, shared as Codex does, not private copies) and ``writable_roots`` are writable, the rest of
  the machine is read-only, and the usual secret folders are not readable.
- ``read-only``: nothing is writable but a private temporary folder, made for the ink process and
  given to commands as ``$TMPDIR``.
- ``off``: no sandbox.

Network is off in both sandboxed modes unless ``network`` is true.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal, TypeAlias, get_args

import msgspec

SandboxMode: TypeAlias = Literal["read-only", "workspace-write", "off"]
MODES: tuple[SandboxMode, ...] = get_args(SandboxMode)
DEFAULT_MODE: SandboxMode = "workspace-write"
SECRET_FOLDERS = (".ssh", ".gnupg", ".aws", ".config/gh")
"""Under the home folder; ``$INK_HOME`` is added to them."""
SHARED_TEMPORARY = ("/tmp", "/dev/shm")


class SandboxPolicy(msgspec.Struct, frozen=True):
    """One mode's rules for one workspace. Paths are absolute and resolved (symlinks followed), since
    Landlock judges the real path a command reaches."""

    mode: SandboxMode
    workspace: Path
    network: bool = False
    writable: tuple[Path, ...] = ()
    """Everything writable: for ``workspace-write`` the workspace, temporary folders and configured
    roots; for ``read-only`` the private temporary folder only."""
    secrets: tuple[Path, ...] = ()
    temporary: Path | None = None
    """``read-only``'s private temporary folder, given to commands as ``$TMPDIR``."""

    @property
    def active(self) -> bool:
        return self.mode != "off"

    def describe_writable(self, home: Path | None = None) -> str:
        return ", ".join(_short(p, home) for p in self.writable) or "nothing"


def build_policy(
    mode: SandboxMode,
    workspace: Path,
    *,
    network: bool = False,
    writable_roots: tuple[Path, ...] = (),
    ink_home: Path | None = None,
    environ: Mapping[str, str] | None = None,
    private_temporary: Path | None = None,
) -> SandboxPolicy:
    """The policy of ``mode`` for ``workspace``. ``environ`` gives ``HOME`` and ``TMPDIR`` (default:
    this process's). ``read-only`` needs ``private_temporary`` (``make_private_temporary``)."""
    env = os.environ if environ is None else environ
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    secrets = [home / name for name in SECRET_FOLDERS] + ([ink_home] if ink_home is not None else [])
    resolved_secrets = tuple(dict.fromkeys(_real(p) for p in secrets))
    if mode == "workspace-write":
        tmpdir = env.get("TMPDIR")
        shared = [Path(p) for p in SHARED_TEMPORARY] + ([Path(tmpdir)] if tmpdir else [])
        candidates = [workspace, *shared, *writable_roots]
        writable = tuple(dict.fromkeys(_real(p) for p in candidates))
        return SandboxPolicy(mode, _real(workspace), network, writable, resolved_secrets)
    if mode == "read-only":
        if private_temporary is None:
            raise ValueError("read-only needs a private temporary folder")
        temporary = _real(private_temporary)
        return SandboxPolicy(mode, _real(workspace), network, (temporary,), resolved_secrets, temporary)
    return SandboxPolicy("off", _real(workspace), True)


def make_private_temporary() -> Path:
    """A fresh folder only this user can enter, for ``read-only``'s commands (removed by the caller)."""
    import tempfile  # here: the default mode never needs it (tempfile and random, ~1 ms of every start)

    return Path(tempfile.mkdtemp(prefix="ink-sandbox-tmp-"))


def _real(path: Path) -> Path:
    return Path(os.path.realpath(os.path.expanduser(path)))


def _short(path: Path, home: Path | None) -> str:
    if home is not None and path.is_relative_to(home) and path != home:
        return "~/" + str(path.relative_to(home))
    return str(path)
