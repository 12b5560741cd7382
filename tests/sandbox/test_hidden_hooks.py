"""A hook whose script lives in ``$INK_HOME`` is named at start-up when the sandbox would hide it (R41,
R39): the docs once told users to keep hooks in ``~/.ink/hooks``, where every sandboxed hook was refused
its own script and so blocked each call it matched, with no word on why."""

from __future__ import annotations

import sys
from pathlib import Path

from ink.config import Flags, load_settings
from tests.cli.inkproc import ink_env, run_ink
from tests.fakeserver import FakeModelServer, Reply, say, tool_call
from tests.jsonl_client import provider_args
from tests.sandbox.conftest import require_sandbox

GUARD = 'import sys; sys.stdin.read(); print(\'{"decision": "approve"}\')\n'


def user_hook(tmp_path: Path, script: Path, command: str) -> dict[str, str]:
    """ink's environment with ``$INK_HOME`` at ``~/.ink`` and one user pre_tool hook ``command``."""
    env = ink_env(tmp_path)
    env["INK_HOME"] = env["HOME"] + "/.ink"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(GUARD)
    home = Path(env["INK_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(f'[[hooks.pre_tool]]\ncommand = "{command}"\n')
    return env


def warnings_for(tmp_path: Path, command: str, script: Path, sandbox: str | None = None) -> list[str]:
    env = user_hook(tmp_path, script, command)
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    settings = load_settings(Flags(sandbox=sandbox), env, project)
    return [w for w in settings.warnings if "inside $INK_HOME" in w]


def test_a_hook_script_in_ink_home_is_named_however_the_command_spells_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    script = home / ".ink" / "hooks" / "guard.py"
    for command in (f"{sys.executable} ~/.ink/hooks/guard.py", f"{sys.executable} $INK_HOME/hooks/guard.py"):
        [warning] = warnings_for(tmp_path, command, script)
        assert str(script) in warning and "~/.config/ink/hooks/" in warning, warning
    assert warnings_for(tmp_path, f"{sys.executable} ~/.ink/hooks/guard.py", script, sandbox="off") == []


def test_a_hook_script_kept_elsewhere_is_not_named(tmp_path: Path) -> None:
    script = tmp_path / "home" / ".config" / "ink" / "hooks" / "guard.py"
    assert warnings_for(tmp_path, f"{sys.executable} ~/.config/ink/hooks/guard.py", script) == []


def test_R41_the_warning_is_true_the_hook_in_ink_home_blocks_and_one_elsewhere_runs(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    require_sandbox()
    project = tmp_path / "project"
    project.mkdir()
    for where, blocked in ((".ink/hooks", True), (".config/ink/hooks", False)):
        fake_server.script(Reply([tool_call("bash", {"command": "echo ran-it"}, id="c1")]), say("done"))
        script = tmp_path / "home" / where / "guard.py"
        env = user_hook(tmp_path, script, f"{sys.executable} ~/{where}/guard.py")
        done = run_ink(
            ["-p", "go", *provider_args(fake_server, "openai", "--permission-mode", "yolo")], env, project
        )
        assert done.returncode == 0, done.stderr
        assert ("inside $INK_HOME" in done.stderr) is blocked, done.stderr
        [(_, result)] = fake_server.requests[-1].tool_results()
        assert ("ran-it" not in result) is blocked, result
