"""Start-up stays light: ``ink --version`` (and ``--help``) import no HTTP stack nor any UI library; a
turn imports ink's own HTTP/1.1 client (h11 on asyncio), never httpx."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.inkproc import ink_env
from tests.fakeserver import FakeModelServer, call, say

HEAVY = (
    "httpx",
    "h11",
    "httpcore",
    "anyio",
    "ssl",
    "asyncio",
    "rich",
    "prompt_toolkit",
    "textual",
    "psutil",
    "ink.ai",
)


def imported_modules(args: list[str], tmp_path: Path, cwd: Path | None = None) -> set[str]:
    """Every module ink loads, from the interpreter's verbose lines (``import 'name' # loader``):
    ``-X importtime`` leaves out what ``importlib.import_module`` loads (a frontend, the session store's
    lazy names)."""
    done = subprocess.run(
        [sys.executable, "-v", "-m", "ink", *args],
        env=ink_env(tmp_path),
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    modules = {line.split("'")[1] for line in done.stderr.splitlines() if line.startswith("import '")}
    assert {"ink", "ink.cli"} <= modules  # the parse works: ink itself shows up
    return modules


@pytest.mark.parametrize("args", [["--version"], ["-V"], ["--help"]])
def test_version_and_help_import_nothing_heavy(args: list[str], tmp_path: Path) -> None:
    modules = imported_modules(args, tmp_path)
    heavy = sorted(m for m in modules if m.split(".")[0] in HEAVY or m.startswith(HEAVY))
    assert heavy == []


def test_version_text(tmp_path: Path) -> None:
    from ink import __version__

    done = subprocess.run(
        [sys.executable, "-m", "ink", "--version"], capture_output=True, text=True, check=True
    )
    assert done.stdout == f"ink {__version__}\n"


def test_print_mode_imports_no_ui_library(fake_server: FakeModelServer, tmp_path: Path) -> None:
    """A headless turn loads no UI code (httpx's optional command-line client would pull in rich and
    pygments whenever click is installed, as it is in the dev environment), and no httpx at all: the
    providers speak HTTP/1.1 through h11."""
    fake_server.script(say("hi"))
    args = ["-p", "--no-session", "--base-url", fake_server.openai_base_url, "hello"]
    modules = imported_modules(args, tmp_path)
    assert "ink.ai.http1" in modules and "h11" in modules  # the turn really ran through the provider
    assert not {"httpx", "httpcore", "anyio"} & modules
    ui = sorted(
        m for m in modules if m.split(".")[0] in ("rich", "prompt_toolkit", "textual", "pygments", "click")
    )
    assert ui == []


# What a print-mode turn that runs one allowed plain command does not need: each is imported where it
# is used (the bash parser for a command that is not plain words, psutil to search or signal a process
# that lives on, fastjsonschema for arguments that do not plainly fit their schema, difflib for an edit,
# sysconfig to find rg, shlex for a custom command's arguments, the idna codec for a host name that is
# not ASCII, random for a retry's jitter, tempfile for the read-only sandbox's private folder, the
# session store's reader, writer and listing for a run without a session, what starts, watches and ends
# a background job, the budget's counting without a limit).
NOT_FOR_A_PLAIN_TURN = (
    "bashlex",
    "ink.permissions.bash_tables",
    "psutil",
    "fastjsonschema",
    "difflib",
    "sysconfig",
    "shlex",
    "encodings.idna",
    "random",
    "tempfile",
    "ink.store.session",
    "ink.store.writer",
    "ink.store.loader",
    "ink.store.listing",
    "ink.tools.jobs.control",
    "ink.tools.jobs.spawn",
    "ink.run.budget",
)  # hashlib is used now: remembered answers live per project under $INK_HOME, in a folder named by digest


def test_a_print_mode_turn_with_a_plain_command_imports_only_what_it_uses(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    fake_server.script(call("bash", {"command": "echo hi"}), say("done"))
    args = ["-p", "--no-session", "--base-url", fake_server.openai_base_url, "--allow", "bash(echo hi)", "go"]
    modules = imported_modules(args, tmp_path)
    assert fake_server.requests[-1].tool_results()[0][1].startswith("hi")  # the command really ran
    unused = sorted(m for m in modules if any(m == n or m.startswith(f"{n}.") for n in NOT_FOR_A_PLAIN_TURN))
    assert unused == []


# What a text turn of a new saved session does not need: a restore's code (and secrets, random) is
# imported when a rewind restores files, a snapshot never uses it; the session store's reader and listing
# when a session is resumed or listed.
NOT_FOR_A_SAVED_TURN = (
    "ink.checkpoints.restore",
    "secrets",
    "random",
    "tempfile",
    "ink.store.loader",
    "ink.store.listing",
)


def test_a_saved_sessions_text_turn_imports_no_restore(fake_server: FakeModelServer, tmp_path: Path) -> None:
    fake_server.script(say("hi"))
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("kept by the checkpoint\n")
    modules = imported_modules(["-p", "--base-url", fake_server.openai_base_url, "hello"], tmp_path, work)
    assert "ink.checkpoints.shadow" in modules  # the session and its checkpoints were really kept
    assert list((tmp_path / "inkhome" / "checkpoints" / "repos").iterdir())
    unused = sorted(m for m in modules if any(m == n or m.startswith(f"{n}.") for n in NOT_FOR_A_SAVED_TURN))
    assert unused == []


PROBE_FRONTEND = """
import gc, importlib.machinery, sys, types
import ink.cli

probe = types.ModuleType("probe_frontend")
probe.__spec__ = importlib.machinery.ModuleSpec("probe_frontend", None)
probe.main = lambda settings, invocation: print(gc.isenabled(), gc.get_freeze_count()) or 0
sys.modules["probe_frontend"] = probe
ink.cli.FRONTEND_MODULES["print"] = "probe_frontend"
status = ink.cli.main(sys.argv[1:])
print(gc.isenabled(), status)
"""


def test_the_collector_runs_again_when_the_frontend_starts(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    """Start-up runs without the cyclic garbage collector; the frontend (the run, a whole TUI session)
    runs with it, and the start-up objects it would only walk again and again are frozen out of its sight."""
    args = ["-p", "--no-session", "--base-url", fake_server.openai_base_url, "hello"]
    done = subprocess.run(
        [sys.executable, "-c", PROBE_FRONTEND, *args],
        env=ink_env(tmp_path),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    in_frontend, after = done.stdout.splitlines()
    enabled, frozen = in_frontend.split()
    assert enabled == "True" and int(frozen) > 10_000  # the settings, the modules and their classes
    assert after == "True 0"


def test_the_collector_runs_again_after_bad_input(tmp_path: Path) -> None:
    code = "import gc, ink.cli; status = ink.cli.main(['--no-such-flag']); print(gc.isenabled(), status)"
    done = subprocess.run(
        [sys.executable, "-c", code], env=ink_env(tmp_path), capture_output=True, text=True, check=True
    )
    assert done.stdout == "True 2\n"
