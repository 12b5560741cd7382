"""Running ``ink`` as a real subprocess, with a clean environment of the test's own making.

The environment is built from scratch (PATH only from outside), so no API key or base URL of the
developer's shell leaks in, and ``HOME``/``INK_HOME`` point into the test's tmp dir: the real home is
never read or written.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

INK = [sys.executable, "-m", "ink"]


def ink_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path / "home"),
        "INK_HOME": str(tmp_path / "inkhome"),
        "LANG": "C.UTF-8",
    }
    return env | extra


def run_ink(
    args: list[str], env: dict[str, str], cwd: Path, *, stdin: str | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run ink to its end. stdin is empty (not a terminal) unless ``stdin`` is given."""
    return subprocess.run(
        [*INK, *args],
        env=env,
        cwd=cwd,
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def start_ink(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*INK, *args],
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def one_line_error(stderr: str) -> str:
    """The whole stderr must be one ``ink: ...`` line without a traceback; returns it."""
    lines = stderr.splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got: {stderr!r}"
    assert lines[0].startswith("ink: "), lines[0]
    assert "Traceback" not in stderr
    return lines[0]
