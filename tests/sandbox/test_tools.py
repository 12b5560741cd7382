"""R41 through the bash tool and hooks: a refusal says so (``details`` and words for the model), and
nothing runs uncontained because the sandbox could not be set up (R39)."""

from __future__ import annotations

import errno
import os
import shlex
from pathlib import Path

from ink.agent.abort import AbortSignal
from ink.agent.tool import ToolCallContext, ToolOutput
from ink.ai.details import ExitStatus, SandboxReport, detail_from_json
from ink.ai.jsonform import to_json
from ink.config.hooks import HookSpec
from ink.extend.hook_process import run_hook
from ink.sandbox import Sandbox, open_sandbox
from ink.sandbox.landlock import Kernel, LandlockError
from ink.tools import BashTool, ProcessRegistry, Workspace
from tests.sandbox.conftest import policy, require_sandbox


def sandbox_for(workspace: Path) -> Sandbox:
    require_sandbox()
    return open_sandbox("workspace-write", workspace)


async def test_R41_a_refused_write_says_so(tmp_path: Path, outside: Path, registry: ProcessRegistry) -> None:
    sandbox = sandbox_for(tmp_path)
    tool = BashTool(Workspace(tmp_path), registry, sandbox=sandbox)
    target = outside / "x"
    out = await tool.run(
        {"command": f"echo hi > {shlex.quote(str(target))}"}, ToolCallContext("c", AbortSignal())
    )
    assert out.is_error and not target.exists()
    assert "[sandbox: denied. The sandbox (workspace-write) refused to write" in out.output
    assert "sandbox: false" in out.output  # the way out, for the model
    report = out.details[-1]
    assert report == SandboxReport("denied", "write", str(target))
    assert detail_from_json(to_json(report)) == report  # as the session file and RPC carry it
    ok = await tool.run({"command": "echo fine > here && cat here"}, ToolCallContext("c", AbortSignal()))
    assert (
        not ok.is_error
        and ok.output.startswith("fine")
        and all(isinstance(d, ExitStatus) for d in ok.details)
    )
    sandbox.close()


async def test_R41_an_ordinary_permission_error_is_not_called_a_denial(
    tmp_path: Path, registry: ProcessRegistry
) -> None:
    sandbox = sandbox_for(tmp_path)
    locked = tmp_path / "locked"
    locked.mkdir()
    tool = BashTool(Workspace(tmp_path), registry, sandbox=sandbox)
    command = 'echo "bash: $PWD/locked/x: Permission denied" >&2; exit 1'  # as a chmod 000 folder would say
    out = await tool.run({"command": command}, ToolCallContext("c", AbortSignal()))
    assert out.is_error and "Permission denied" in out.output
    assert "[sandbox" not in out.output  # inside the writable folders: the command's own problem
    assert not any(isinstance(d, SandboxReport) for d in out.details)
    sandbox.close()


class _FailingRestrict(Kernel):
    """Landlock answers the version but refuses to build rules: the sandbox cannot be set up."""

    def syscall(self, number: int, *args: object) -> int:
        if number == 444 and args and args[0] is None:
            return 7
        raise LandlockError(errno.EPERM, os.strerror(errno.EPERM))


async def test_R39_nothing_runs_when_the_sandbox_cannot_be_set_up(
    tmp_path: Path, registry: ProcessRegistry
) -> None:
    sandbox = sandbox_for(tmp_path)
    sandbox._confinement.close()
    sandbox._confinement._ruleset = None
    sandbox._confinement._kernel = _FailingRestrict()
    tool = BashTool(Workspace(tmp_path), registry, sandbox=sandbox)
    out = await tool.run({"command": "echo ran > ran"}, ToolCallContext("c", AbortSignal()))
    assert out.is_error and out.output.startswith("Not run:") and not (tmp_path / "ran").exists()
    assert isinstance(out.details[0], SandboxReport) and out.details[0].sandbox == "error"


async def test_R41_hooks_run_in_the_sandbox(tmp_path: Path, outside: Path, registry: ProcessRegistry) -> None:
    sandbox = sandbox_for(tmp_path)
    target = outside / "from-hook"
    hook = HookSpec(
        "PreToolUse",
        f"cat > /dev/null; echo x > {shlex.quote(str(target))} || echo refused",
        "test",
        timeout=30,
    )
    answer = await run_hook(hook, {"tool": "bash"}, tmp_path, AbortSignal(), registry, 0.2, sandbox)
    assert not target.exists()
    assert "refused" in answer.context
    sandbox.close()


async def test_R41_a_writable_folder_holding_a_secret_one_says_why_nothing_is_made_in_it(
    fake_home: Path, registry: ProcessRegistry
) -> None:
    """The workspace is the home folder, which holds ~/.ssh: its files can be written and its other
    folders used, the key cannot be read, and a new file directly in it is refused with the reason (a
    right granted on a folder holds for everything beneath it, the secret folder included)."""
    require_sandbox()
    (fake_home / "sub").mkdir()
    sandbox = Sandbox(policy("workspace-write", fake_home, fake_home))
    tool = BashTool(Workspace(fake_home), registry, sandbox=sandbox)

    async def bash(command: str) -> ToolOutput:
        return await tool.run({"command": command}, ToolCallContext("c", AbortSignal()))

    fine = await bash("echo more >> notes.txt && echo y > sub/made && cat sub/made")
    assert not fine.is_error and fine.output.startswith("y"), fine.output
    secret = await bash("cat .ssh/id_ed25519")
    assert secret.is_error and "PRIVATE" not in secret.output
    assert secret.details[-1] == SandboxReport("denied", "read", ".ssh/id_ed25519")
    made = await bash("echo x > new.txt")
    assert made.is_error and not (fake_home / "new.txt").exists()
    assert made.details[-1] == SandboxReport("denied", "write", "new.txt")
    assert f"directly in the folder that holds {fake_home / '.ssh'}" in made.output
    sandbox.close()
