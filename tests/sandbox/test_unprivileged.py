"""R41 as an ordinary user: the escape attempts again, run as ``nobody`` (CI runs as root, where file
permissions never stop anything, so there the sandbox alone stands between a command and the disk; as
an ordinary user the same attempts must fail the same way)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sandbox.conftest import OUTSIDE_PARENT, confinement, require_sandbox

NOBODY = 65534


@pytest.fixture
def owned() -> Iterator[tuple[Path, Path]]:
    """A workspace and an outside folder that nobody owns: only the sandbox can refuse a write."""
    require_sandbox()
    if os.geteuid() != 0:
        pytest.skip("already unprivileged: the other sandbox tests are the unprivileged run")
    made = [Path(tempfile.mkdtemp(prefix=f"ink-{name}-", dir=OUTSIDE_PARENT)) for name in ("ws", "outside")]
    for path in made:
        os.chown(path, NOBODY, NOBODY)
    yield made[0], made[1]
    for path in made:
        shutil.rmtree(path, ignore_errors=True)


def as_nobody(command: str, workspace: Path, confined: object) -> subprocess.CompletedProcess[str]:
    preexec = confined.preexec() if confined is not None else None  # type: ignore[attr-defined]
    return subprocess.run(
        ["bash", "-c", command],
        cwd=workspace,
        user=NOBODY,
        group=NOBODY,
        extra_groups=[],
        env={"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(workspace)},
        preexec_fn=preexec,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def attempts(target: Path) -> dict[str, str]:
    name = shlex.quote(str(target))
    found = [p for p in ("/usr/bin/python3", "/bin/python3") if os.access(p, os.X_OK)]
    python = {
        "from Python": f"{found[0]} -c {shlex.quote(f'open({str(target)!r}, chr(119)).write(chr(120))')}"
    }
    return {
        "directly": f"echo x > {name}",
        "through a symlink": f"ln -s {shlex.quote(str(target.parent))} link && echo x > link/{target.name}",
        "through /proc/self/root": f"echo x > /proc/self/root{name}",
        "from a detached child": f"setsid bash -c 'echo x > {name}; echo tried > tried' & wait; cat tried",
    } | (python if found else {})


def test_R41_escapes_fail_as_an_ordinary_user_too(owned: tuple[Path, Path]) -> None:
    workspace, outside = owned
    confined = confinement("workspace-write", workspace)
    for how, command in attempts(outside / "escaped").items():
        done = as_nobody(command, workspace, confined)
        assert not (outside / "escaped").exists(), f"{how}: {done.stdout}{done.stderr}"
        assert "Permission denied" in done.stderr, f"{how}: {done.stderr}"
    done = as_nobody("echo fine > mine && cat mine", workspace, confined)
    assert done.stdout.strip() == "fine", done.stderr
    unconfined = as_nobody(attempts(outside / "escaped")["directly"], workspace, None)
    assert unconfined.returncode == 0 and (outside / "escaped").exists()  # the user may, the sandbox not
