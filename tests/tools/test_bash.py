"""The bash tool: what the model sees for each way a command can end (R17, R33)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from ink.agent.abort import AbortSignal
from ink.agent.tool import Tool, ToolCallContext
from ink.ai.details import ExitStatus
from ink.ai.messages import ToolCall
from ink.tools import BashTool, ProcessRegistry, ShellResult, Survivor, Workspace, format_shell_result
from tests.tools.conftest import Marker, call, is_gone


async def test_output_and_exit_code(tools: dict[str, Tool]) -> None:
    out = await call(tools["bash"], command="echo hello")
    assert out.output == "hello\n[exit code 0]"
    assert not out.is_error and not out.interrupted


async def test_nonzero_exit_is_an_error_result(tools: dict[str, Tool]) -> None:
    out = await call(tools["bash"], command="echo nope >&2; exit 2")
    assert out.output == "nope\n[exit code 2]"
    assert out.is_error
    assert out.details == (ExitStatus(2),)  # for the user: no parsing of "[exit code 2]"


async def test_no_output_is_said_plainly(tools: dict[str, Tool]) -> None:
    out = await call(tools["bash"], command="true")
    assert out.output == "(no output)\n[exit code 0]"


async def test_runs_in_the_workspace(tmp_path: Path, tools: dict[str, Tool]) -> None:
    out = await call(tools["bash"], command="pwd")
    assert out.output == f"{tmp_path}\n[exit code 0]"


async def test_R33_abort_gives_an_honest_interrupted_result(ws: Workspace, registry: ProcessRegistry) -> None:
    seen = Marker("ready")
    tool = BashTool(ws, registry)
    signal = AbortSignal()
    # the live output a frontend is shown
    live = ToolCallContext(ToolCall("call-1", "bash", {}), signal, on_update=seen)
    task = asyncio.ensure_future(tool.run({"command": "echo ready; sleep 100"}, live))
    await asyncio.wait_for(seen.seen.wait(), 10)
    leader = registry.entries[-1].pid
    signal.abort("user")
    out = await task
    assert out.interrupted and out.is_error
    assert re.fullmatch(
        r"Interrupted by the user after \d+\.\d s; process group killed with SIGTERM\. Output so far:\nready",
        out.output,
    )
    assert is_gone(leader)
    assert out.details == (ExitStatus(-15, "SIGTERM", timed_out=False, interrupted=True),)


async def test_timeout_argument_is_honoured(tools: dict[str, Tool]) -> None:
    out = await call(tools["bash"], command="echo partial; sleep 100", timeout=0.3)
    assert out.is_error and not out.interrupted
    assert re.fullmatch(
        r"Timed out after 0\.\d s; process group killed with SIGTERM\. Output so far:\npartial", out.output
    )


async def test_background_holder_is_reported(tools: dict[str, Tool]) -> None:
    out = await call(tools["bash"], command="sleep 100 & echo started")
    assert out.output == (
        "started\n[exit code 0]\n"
        "[Background processes kept the output open after the command exited; "
        "they were stopped with SIGTERM.]"
    )


async def test_empty_command_is_refused(tools: dict[str, Tool]) -> None:
    out = await call(tools["bash"], command="   ")
    assert out.is_error and out.output == "The command is empty."


def test_format_reports_kill_signal_and_survivors() -> None:
    result = ShellResult(
        "half\n",
        -9,
        interrupted=True,
        timed_out=False,
        signal_name="SIGKILL",
        duration=3.24,
        survivors=(Survivor(4242, "stubborn --daemon", "still alive after SIGKILL"),),
    )
    assert format_shell_result(result, "user") == (
        "Interrupted by the user after 3.2 s; "
        "process group killed with SIGKILL (it did not stop on SIGTERM). "
        "Output so far:\nhalf\n\n"
        "[Warning: process 4242 (stubborn --daemon) could not be stopped: still alive after SIGKILL.]"
    )


def test_format_names_a_signal_that_ended_the_command() -> None:
    result = ShellResult("", -11, False, False, None, 0.1)
    assert format_shell_result(result) == "(no output)\n[exit code -11 (killed by SIGSEGV)]"


def test_format_names_another_abort_reason() -> None:
    result = ShellResult("x\n", -15, True, False, "SIGTERM", 1.0)
    assert format_shell_result(result, "redirect").startswith("Interrupted (redirect) after 1.0 s;")
