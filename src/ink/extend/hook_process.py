"""Running one hook command and reading its answer (docs/hooks.md has the user's side of it).

The command runs with ``bash -c`` in the project directory, through the same process path as every
command ink starts (``ink.tools.shell``): its own process group, registered in the run's process
registry, killed on abort (R35) or when its ``timeout`` passes. The event's JSON arrives on stdin (a
file, so a hook that never reads it cannot block ink); stdout and stderr are kept apart, as Claude Code's
hooks expect, and both are bounded as they arrive (R39): stdout is read up to ``STDOUT_CAP`` (an answer
longer than that is not an answer), stderr keeps its head and tail within ``STDERR_CAP``, so a hook that
prints 100 MB costs ink a few kilobytes of memory, and nothing larger reaches a result, a notice or a
session file.

- exit 0: stdout may be a JSON object (``decision``, ``reason``, ``hookSpecificOutput``, ...); other
  text is context for the prompt and session events;
- exit 2: a block, with stderr as the reason;
- anything else, a timeout, a failure to start, or an answer that cannot be read: a ``problem``. What a
  problem means is the caller's to decide by event (``hooks``): a pre_tool hook's problem blocks the call.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from ink.agent.abort import AbortSignal
from ink.config.hooks import HookEvent, HookSpec
from ink.extend.hook_stderr import StderrPipe
from ink.sandbox import Sandbox
from ink.tools.processes import ProcessRegistry
from ink.tools.shell import run_process
from ink.vocabulary import Verdict

HOOK_VERDICTS: dict[str, Verdict] = {  # the words hooks of other agents use, too
    "allow": "allow",
    "approve": "allow",
    "deny": "deny",
    "block": "deny",
    "ask": "ask",
}
STDOUT_CAP = 64 * 1024
"""Characters of a hook's stdout read as its answer; a longer answer is refused, not cut (a cut JSON
object no longer parses, and a deny read as plain text would let the call run)."""
STDERR_CAP = 16 * 1024
"""Bytes of a hook's stderr kept, head and tail: the reason of an exit-2 block, the detail of a failure."""
SHOWN_ERRORS = 500  # characters of stderr quoted in a failure's notice
# Run the hook with stdin and stderr redirected to files ink owns; $0 is the hook's command.
_REDIRECT = 'bash -c "$0" < "$1" 2> "$2"'


class HookAnswer(msgspec.Struct, frozen=True):
    """What a hook said. ``problem``: why it said nothing usable (failed, timed out, answered something
    unreadable), for the user. ``updated_input``: a pre_tool hook's replacement for the tool's input, as
    the hook wrote it (Claude Code's field names). ``stop``: the hook said ``"continue": false``: the
    run stops (as a user's interrupt stops it), and this is its ``stopReason``, for the user."""

    decision: Verdict | None = None
    reason: str = ""
    context: str = ""
    message: str = ""
    problem: str = ""
    updated_input: dict[str, Any] | None = None
    stop: str | None = None


class _Stdout:
    """``on_output`` of the hook's process: its stdout, kept up to ``STDOUT_CAP`` characters."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.over = False

    def __call__(self, text: str) -> None:
        if self.over:
            return
        self.size += len(text)
        if self.size > STDOUT_CAP:
            self.over, self.parts = True, []
            return
        self.parts.append(text)

    @property
    def text(self) -> str:
        return "".join(self.parts)


async def run_hook(
    hook: HookSpec,
    event: Mapping[str, Any],
    cwd: Path,
    signal: AbortSignal,
    processes: ProcessRegistry,
    kill_delay: float,
    sandbox: Sandbox | None = None,
) -> HookAnswer:
    """Never raises for how the hook ended: the answer says it. With ``sandbox`` the hook runs in it
    (R41), its scratch files where the sandbox lets it write them."""
    stdout = _Stdout()
    temporary = sandbox.temporary if sandbox is not None else None
    with tempfile.TemporaryDirectory(prefix="ink-hook-", dir=temporary) as scratch:
        stdin = Path(scratch) / "event.json"
        stdin.write_text(json.dumps(event, ensure_ascii=False), encoding="utf-8")
        bash = shutil.which("bash") or "/bin/bash"
        env = {"INK_PROJECT_DIR": str(cwd), "CLAUDE_PROJECT_DIR": str(cwd)}
        try:
            async with StderrPipe(Path(scratch) / "stderr", STDERR_CAP) as stderr:
                ran = await run_process(
                    [bash, "-c", _REDIRECT, hook.command, str(stdin), str(stderr.path)],
                    cwd,
                    signal,
                    processes,
                    hook.timeout,
                    output_cap=STDOUT_CAP,
                    kill_delay=kill_delay,
                    on_output=stdout,
                    label=f"{hook.event} hook: {hook.command}",
                    env=env,
                    confinement=sandbox.confinement() if sandbox is not None else None,
                )
        except OSError as exc:
            return HookAnswer(problem=f"{hook.label} could not start: {exc.strerror or exc}")
    errors = stderr.text.strip()
    if ran.interrupted:
        return HookAnswer(problem=f"{hook.label} was stopped by the abort")
    if ran.timed_out:
        return HookAnswer(problem=f"{hook.label} did not finish within {hook.timeout:g} s and was killed")
    if ran.exit_code == 2:
        return HookAnswer("deny", errors or f"blocked by {hook.label}")
    if ran.exit_code != 0:
        detail = f": {errors[-SHOWN_ERRORS:]}" if errors else ""
        return HookAnswer(problem=f"{hook.label} failed with exit status {ran.exit_code}{detail}")
    if stdout.over:
        return HookAnswer(problem=f"{hook.label} answered more than {STDOUT_CAP} characters on stdout")
    answer = read_answer(stdout.text, hook.event)
    if answer.problem:
        return msgspec.structs.replace(answer, problem=f"{hook.label} {answer.problem}")
    return answer


def read_answer(stdout: str, event: HookEvent = "post_tool") -> HookAnswer:
    """A successful hook's stdout: Claude Code's JSON shape (and ink's short one), or plain text.

    Text that starts with ``{`` is meant as an answer: when it is not one JSON object, or names a
    decision ink does not know, or an ``updatedInput`` that is not an object, the answer is a ``problem``
    (for a pre_tool hook that blocks the call: an answer ink cannot read must not read as "go ahead")."""
    text = stdout.strip()
    if not text.startswith("{"):
        return HookAnswer(context=text)
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return HookAnswer(problem="answered text that starts like JSON but is not a JSON object")
    if not isinstance(data, dict):
        return HookAnswer(problem="answered JSON that is not an object")
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    said = specific.get("permissionDecision") or data.get("decision")
    decision = HOOK_VERDICTS.get(said) if isinstance(said, str) else None
    if said and decision is None:
        return HookAnswer(problem=f"answered a decision ink does not know ({_quoted(said)})")
    reason = _text(specific.get("permissionDecisionReason") or data.get("reason"))
    stop = None
    if data.get("continue") is False:  # Claude Code: the run stops; stopReason is for the user
        stop = _text(data.get("stopReason")) or reason or "a hook said not to continue"
        decision = "deny" if event in ("pre_tool", "user_prompt") else decision  # that call never runs
        reason = reason or stop
    context = _text(specific.get("additionalContext") or data.get("additionalContext") or data.get("context"))
    updated = specific.get("updatedInput")
    if updated is not None and not (event == "pre_tool" and isinstance(updated, dict)):
        where = "an object" if event == "pre_tool" else f"an answer of a {event} hook"
        return HookAnswer(problem=f"answered an updatedInput that is not {where}")
    message = _text(data.get("systemMessage"))
    return HookAnswer(decision, reason, context, message, updated_input=updated, stop=stop)


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def _quoted(value: object) -> str:
    shown = json.dumps(value, ensure_ascii=False)
    return shown if len(shown) <= 60 else shown[:59] + "…"
