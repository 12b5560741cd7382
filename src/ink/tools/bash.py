"""bash: run a shell command in the working directory; on abort, its whole process tree is ended."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from ink.agent.tool import CallDescription, ToolCallContext, ToolOutput
from ink.ai.details import ExitStatus, JobReport, SandboxReport, ToolDetail
from ink.sandbox import Sandbox, SandboxPolicy, SandboxUnavailable, explain
from ink.tools.base import BaseTool, arg_str, error, get_bool, get_number, get_str, object_schema, shorten
from ink.tools.jobs import JobRegistry
from ink.tools.jobs.notes import detached_note
from ink.tools.limits import MAX_OUTPUT_BYTES
from ink.tools.processes import DEFAULT_KILL_DELAY, ProcessRegistry
from ink.tools.shell import DEFAULT_TIMEOUT, Detach, ShellResult, run_shell
from ink.tools.workspace import Workspace

MAX_TIMEOUT = 3600.0

DESCRIPTION = f"""Run a command with `bash -c` in the working directory and return its output \
(stdout and stderr together) and exit code.
- Each call is a fresh shell: `cd` and variables do not carry over to the next call. Chain steps with \
`&&` in one command.
- stdin is empty: commands that wait for input (prompts, editors, pagers) get end-of-file.
- `timeout` in seconds (default {DEFAULT_TIMEOUT:g}, at most {MAX_TIMEOUT:g}); then the command and \
everything it started are stopped.
- Output over {MAX_OUTPUT_BYTES // 1000} KB keeps its beginning and end, with a notice of what was cut \
from the middle. Redirect big output to a file and use grep or read on it.
- `background: true` runs a command that keeps going (a dev server, a watcher, a long build) as a \
background job: the call returns at once with its job id, the job runs on with everything it starts, \
and you are told when it ends. Read its output with job_output, stop it with job_kill. Jobs end with \
the session. Do not add `&` to it.
- Without it, background processes (`cmd &`) that keep the output open are stopped when the command \
exits; `nohup`/`&` do not keep a process past the session either: use `background: true`.
- Prefer the read, grep, glob and ls tools to cat, grep, find and ls."""
LEAVE = {
    "sandbox": {
        "type": "boolean",
        "description": "false: run this one command outside the sandbox; the user is asked first.",
    },
    "reason": {
        "type": "string",
        "description": "With sandbox: false: why it must run outside the sandbox (the user reads it).",
    },
}


def sandbox_note(policy: SandboxPolicy) -> str:
    """The description's line on the sandbox commands run in (R41)."""
    writes = "the working directory and temporary folders" if policy.mode == "workspace-write" else "$TMPDIR"
    network = "may reach the network" if policy.network else "cannot reach the network"
    return (
        f"\n- Commands run in a sandbox ({policy.mode}): they can write {writes} only, cannot read "
        f"credentials, and {network}. A result ending in `[sandbox: denied. ...]` says what it refused. "
        "Only when the task truly needs more, run that one command with `sandbox: false` and a `reason`: "
        "the user is asked first, and where nobody can answer it is refused."
    )


class BashTool(BaseTool):
    name = "bash"
    description = DESCRIPTION
    parameters = object_schema(
        {
            "command": {"type": "string", "description": "The command to run."},
            "timeout": {
                "type": "number",
                "exclusiveMinimum": 0,
                "maximum": MAX_TIMEOUT,
                "description": f"Seconds before the command is stopped (default {DEFAULT_TIMEOUT:g}); "
                "not for background jobs.",
            },
            "background": {
                "type": "boolean",
                "description": "Start the command as a background job and return its id at once.",
            },
        },
        ["command"],
    )
    safe = False
    kind = "execute"

    def describe(self, args: Mapping[str, Any]) -> CallDescription:
        command = arg_str(args, "command")
        where = "bash (background)" if args.get("background") is True else "bash"
        if not self._leaves(args):
            return CallDescription(f"{where} {shorten(command or '')}", command=command)
        reason = arg_str(args, "reason") or ""
        title = f"{where} (outside the sandbox) {shorten(command or '')}"
        return CallDescription(title, command=command, leaves_sandbox=reason)

    def _leaves(self, args: Mapping[str, Any]) -> bool:
        """The call asks to run outside a sandbox there is (R41)."""
        return args.get("sandbox") is False and self._sandbox is not None and self._sandbox.policy.active

    def __init__(
        self,
        workspace: Workspace,
        processes: ProcessRegistry,
        kill_delay: float = DEFAULT_KILL_DELAY,
        sandbox: Sandbox | None = None,
        jobs: JobRegistry | None = None,
    ) -> None:
        """``jobs``: where ``background: true`` starts its jobs (None: not offered)."""
        self._workspace = workspace
        self._processes = processes
        self._kill_delay = kill_delay
        self._sandbox = sandbox
        self._jobs = jobs
        if jobs is None:
            properties = {k: v for k, v in self.parameters["properties"].items() if k != "background"}
            self.parameters = {**self.parameters, "properties": properties}
        if sandbox is not None and sandbox.policy.active:  # the way out is offered where there is a way in
            self.description = DESCRIPTION + sandbox_note(sandbox.policy)
            self.parameters = object_schema({**self.parameters["properties"], **LEAVE}, ["command"])

    async def execute(self, args: Mapping[str, Any], ctx: ToolCallContext) -> ToolOutput:
        command = get_str(args, "command")
        timeout = min(get_number(args, "timeout", DEFAULT_TIMEOUT), MAX_TIMEOUT)
        if not command.strip():
            return ToolOutput("The command is empty.", is_error=True)
        leaves = self._leaves(args)
        if leaves and not ctx.unsandboxed:  # only the permission step lets a call out (R41)
            return NOT_LET_OUT
        if get_bool(args, "background"):
            return await self._start_job(command, ctx, leaves)
        sandbox = self._sandbox
        with self._detachable(ctx) as detach:
            try:
                confinement = sandbox.confinement() if sandbox is not None and not leaves else None
                result = await run_shell(
                    command,
                    self._workspace.root,
                    ctx.signal,
                    self._processes,
                    timeout,
                    kill_delay=self._kill_delay,
                    on_output=ctx.on_update,
                    confinement=confinement,
                    detach=detach,
                )
            except SandboxUnavailable as exc:  # R39: nothing runs uncontained because the sandbox failed
                report = SandboxReport("error", target=str(exc))
                return ToolOutput(f"Not run: {exc}. Nothing was started.", is_error=True, details=(report,))
            except OSError as exc:
                return ToolOutput(f"Cannot start bash in {self._workspace.root}: {exc}", is_error=True)
        if result.detached and detach is not None:
            return await self._became_job(command, ctx, detach, result)
        text = format_shell_result(result, ctx.signal.reason)
        status = ExitStatus(result.exit_code, result.signal_name, result.timed_out, result.interrupted)
        details: tuple[ToolDetail, ...] = (status,)
        denial = sandbox.denial(result.output, self._workspace.root) if confinement and sandbox else None
        if denial is not None and sandbox is not None:
            text += "\n" + explain(denial, sandbox.policy)
            details += (SandboxReport("denied", denial.kind, denial.target),)
        if leaves:
            text += "\n[ran outside the sandbox, as the user allowed]"
            details += (SandboxReport("off"),)
        return ToolOutput(
            text, is_error=result.exit_code != 0, interrupted=result.interrupted, details=details
        )

    def _detachable(self, ctx: ToolCallContext) -> AbstractContextManager[Detach | None]:
        """While the call runs, the user may send it to the background (Ctrl+B), where jobs exist."""
        return self._jobs.foreground(ctx.tool_call_id) if self._jobs is not None else nullcontext()

    async def _became_job(
        self, command: str, ctx: ToolCallContext, detach: Detach, result: ShellResult
    ) -> ToolOutput:
        """R43: the user sent the running call to the background; it returns now, its command runs on."""
        assert self._jobs is not None
        job = await self._jobs.adopt(detach, command, ctx.tool_call_id, result.duration)
        output = result.output if result.output.strip() else "(no output yet)\n"
        text = f"{detached_note(job.job_id, job.pid or 0, result.duration)}\n{output}"
        return ToolOutput(text.rstrip("\n"), details=(JobReport(job.job_id, job.pid or 0),))

    async def _start_job(self, command: str, ctx: ToolCallContext, leaves: bool) -> ToolOutput:
        """R43: the job runs in the sandbox like any command (outside it when it asked and was let, R41);
        the call returns once it runs."""
        if self._jobs is None:
            return error("Background jobs are not available here: run the command without background.")
        try:
            sandbox = self._sandbox
            confinement = sandbox.confinement() if sandbox is not None and not leaves else None
            job = await self._jobs.start(
                command, self._workspace.root, confinement=confinement, tool_call_id=ctx.tool_call_id
            )
        except SandboxUnavailable as exc:  # R39: nothing runs uncontained because the sandbox failed
            report = SandboxReport("error", target=str(exc))
            return ToolOutput(f"Not run: {exc}. Nothing was started.", is_error=True, details=(report,))
        except OSError as exc:
            return ToolOutput(f"Cannot start the job in {self._workspace.root}: {exc}", is_error=True)
        text = JOB_STARTED.format(job=job.job_id, pid=job.pid)
        if leaves:
            text += "\n[it runs outside the sandbox, as the user allowed]"
        outside = (SandboxReport("off"),) if leaves else ()
        return ToolOutput(text, details=(JobReport(job.job_id, job.pid or 0), *outside))


NOT_LET_OUT = ToolOutput(
    "Not run: running outside the sandbox needs the user's leave, and this call did not get it.",
    is_error=True,
    details=(SandboxReport("error", target="not let out of the sandbox"),),
)
JOB_STARTED = """Started background job {job} (pid {pid}). It runs on, with everything it starts, until \
it ends by itself, job_kill stops it, or the session ends; you will be told when it ends.
Its output so far: job_output {{"jobId": "{job}"}}; its last lines: \
job_output {{"jobId": "{job}", "tail": 50}}."""


def format_shell_result(result: ShellResult, abort_reason: str | None = None) -> str:
    """The text the model (or the user, for a bang line) sees: honest about how the command ended (R33)."""
    output = result.output if result.output.strip() else "(no output)\n"
    if not output.endswith("\n"):
        output += "\n"
    warnings = "".join(f"\n{line}" for line in _warnings(result))
    if result.interrupted or result.timed_out:
        return f"{_stopped(result, abort_reason)} Output so far:\n{output}{warnings}".rstrip("\n")
    return f"{output}[exit code {_status(result.exit_code)}]{warnings}"


def _stopped(result: ShellResult, abort_reason: str | None) -> str:
    if result.timed_out:
        why = f"Timed out after {result.duration:.1f} s"
    elif abort_reason in (None, "user"):
        why = f"Interrupted by the user after {result.duration:.1f} s"
    else:
        why = f"Interrupted ({abort_reason}) after {result.duration:.1f} s"
    if result.signal_name == "SIGKILL":
        return f"{why}; process group killed with SIGKILL (it did not stop on SIGTERM)."
    if result.signal_name:
        return f"{why}; process group killed with {result.signal_name}."
    return f"{why}; the command had already ended."


def _warnings(result: ShellResult) -> list[str]:
    lines = []
    if result.held_open:
        lines.append(
            "[Background processes kept the output open after the command exited; they were stopped "
            f"with {result.signal_name or 'SIGTERM'}.]"
        )
    for survivor in result.survivors:
        lines.append(
            f"[Warning: process {survivor.pid} ({survivor.command}) could not be stopped: {survivor.reason}.]"
        )
    return lines


def _status(code: int | None) -> str:
    if code is None:
        return "unknown"
    if code < 0:
        import signal

        try:
            return f"{code} (killed by {signal.Signals(-code).name})"
        except ValueError:
            return f"{code} (killed by signal {-code})"
    return str(code)
