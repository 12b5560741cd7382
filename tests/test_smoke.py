import subprocess
import sys


def test_version_runs() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "ink", "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.startswith("ink ")
