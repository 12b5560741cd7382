"""Fixtures for the sandbox tests: the REAL sandbox (Landlock and seccomp of this kernel), real commands.

Where the sandbox is expected (Linux) but cannot start, the tests fail with the reason ``ink sandbox
check`` would give: a machine that silently skipped them would pass while containing nothing.
"""

from __future__ import annotations

import os
import platform
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from ink.sandbox import Confinement, SandboxMode, SandboxPolicy, build_policy, probe
from ink.tools import ProcessRegistry

# Outside every writable folder of workspace-write: /tmp, $TMPDIR and /dev/shm are writable in it.
OUTSIDE_PARENT = Path("/var/tmp") if Path("/var/tmp").is_dir() else Path.home()


def require_sandbox() -> None:
    if platform.system() != "Linux":
        pytest.skip("the sandbox is Linux's Landlock; not expected on " + platform.system())
    support = probe()
    if not support.available:
        pytest.fail(f"the sandbox is expected on Linux but cannot start: {support.reason}; {support.remedy}")


@pytest.fixture
def outside() -> Iterator[Path]:
    """A folder the sandbox must not let commands write (nor anything under it)."""
    require_sandbox()
    path = Path(tempfile.mkdtemp(prefix="ink-outside-", dir=OUTSIDE_PARENT))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def fake_home() -> Iterator[Path]:
    """A home folder with a secret key in ~/.ssh, outside /tmp (a workspace under /tmp is not in it)."""
    home = Path(tempfile.mkdtemp(prefix="ink-home-", dir=OUTSIDE_PARENT))
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY\n")
    (home / "notes.txt").write_text("readable\n")
    yield home
    shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
async def registry() -> AsyncIterator[ProcessRegistry]:
    processes = ProcessRegistry()
    yield processes
    await processes.terminate_all(0.1)


def policy(
    mode: SandboxMode,
    workspace: Path,
    home: Path | None = None,
    *,
    network: bool = False,
    temporary: Path | None = None,
) -> SandboxPolicy:
    environ = {"HOME": str(home or Path.home())} | (
        {"TMPDIR": os.environ["TMPDIR"]} if "TMPDIR" in os.environ else {}
    )
    return build_policy(mode, workspace, network=network, environ=environ, private_temporary=temporary)


def confinement(mode: SandboxMode, workspace: Path, home: Path | None = None, **kw: object) -> Confinement:
    require_sandbox()
    return Confinement(policy(mode, workspace, home, **kw))  # type: ignore[arg-type]
