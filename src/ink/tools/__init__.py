"""ink's tools: read, write, edit, bash (and its background jobs: ``ink.tools.jobs``), grep, glob, ls,
plan, and the process handling they share.

``default_tools(cwd, processes)`` builds the standard set for one working directory. Every process a
tool starts goes through ``run_process`` / ``run_shell`` and is registered in the ``ProcessRegistry``,
whose ``terminate_all`` ends every tree on abort and exit and reports survivors (R35).
"""

from __future__ import annotations

import os

from ink.agent.tool import Tool
from ink.sandbox import Sandbox
from ink.tools.bash import BashTool, format_shell_result
from ink.tools.edit import EditTool
from ink.tools.glob import GlobTool
from ink.tools.grep import GrepTool, find_rg
from ink.tools.jobs import JobRegistry
from ink.tools.jobs.tools import JobKillTool, JobOutputTool
from ink.tools.limits import MAX_LINE_CHARS, MAX_LIST_ENTRIES, MAX_OUTPUT_BYTES, MAX_OUTPUT_LINES
from ink.tools.ls import LsTool
from ink.tools.plan import PlanTool
from ink.tools.processes import DEFAULT_KILL_DELAY, ProcessEntry, ProcessRegistry, Survivor, Termination
from ink.tools.read import ReadTool
from ink.tools.shell import DEFAULT_TIMEOUT, ShellResult, run_process, run_shell
from ink.tools.workspace import Workspace, as_workspace, real_target, resolve_path
from ink.tools.write import WriteTool


def default_tools(
    cwd: Workspace | str | os.PathLike[str],
    processes: ProcessRegistry,
    *,
    kill_delay: float = DEFAULT_KILL_DELAY,
    sandbox: Sandbox | None = None,
    jobs: JobRegistry | None = None,
) -> list[Tool]:
    """The standard tools for ``cwd``: read, write, edit, bash, grep, glob, ls, plan (in that order). bash
    runs its commands in ``sandbox`` (``ink.sandbox``) when given. With ``jobs``, bash can start background
    jobs there, and job_output and job_kill follow it."""
    workspace = as_workspace(cwd)
    bash = BashTool(workspace, processes, kill_delay=kill_delay, sandbox=sandbox, jobs=jobs)
    job_tools: list[Tool] = [JobOutputTool(jobs), JobKillTool(jobs)] if jobs is not None else []
    return [
        ReadTool(workspace),
        WriteTool(workspace),
        EditTool(workspace),
        bash,
        *job_tools,
        GrepTool(workspace, processes, kill_delay=kill_delay),
        GlobTool(workspace),
        LsTool(workspace),
        PlanTool(),
    ]


__all__ = [
    "DEFAULT_KILL_DELAY",
    "DEFAULT_TIMEOUT",
    "MAX_LINE_CHARS",
    "MAX_LIST_ENTRIES",
    "MAX_OUTPUT_BYTES",
    "MAX_OUTPUT_LINES",
    "BashTool",
    "EditTool",
    "GlobTool",
    "GrepTool",
    "LsTool",
    "PlanTool",
    "ProcessEntry",
    "ProcessRegistry",
    "ReadTool",
    "ShellResult",
    "Survivor",
    "Termination",
    "Workspace",
    "WriteTool",
    "as_workspace",
    "default_tools",
    "find_rg",
    "format_shell_result",
    "real_target",
    "resolve_path",
    "run_process",
    "run_shell",
]
