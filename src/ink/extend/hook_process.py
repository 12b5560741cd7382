"""Running one hook command and reading its answer (docs/hooks.md has the user's side of it).

The command runs with ``bash -c`` in the project directory, through the same process path as every
command ink starts (``ink.tools.shell``): its own process group, registered in the run's process
registry, killed on abort (R35) or when its ``timeout`` passes. The event's JSON arrives on stdin (a
file, so a hook that never reads it cannot block ink); stdout and stderr are kept apart, as Claude Code's
hooks expect:

- exit 0: stdout may be a JSON object (``decision``, ``reason``, ``hookSpecificOutput``, ...); other
  text is context for the prompt and session events;
- exit 2: a block, with stderr as the reason;
- anything else, a timeout or a failure to start: reported to the user, and the run goes on as if the
  hook had said nothing.
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
from ink.config.hooks import HookSpec
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
# Run the hook with stdin and stderr redirected to files ink owns; $0 is the hook's command.
_REDIRECT = 'bash -c "$0" < "$1" 2> "$2"'


class HookAnswer(msgspec.Struct, frozen=True):
    """What a hook said. ``problem``: why it said nothing (failed, timed out), for the user."""

    decision: Verdict | None = None
    reason: str = ""
    context: str = ""
    message: str = ""
    problem: str = ""


async def run_hook(
    hook: HookSpec,
    event: Mapping[str, Any],
    cwd: Path,
    signal: AbortSignal,
    processes: ProcessRegistry,
    kill_delay: float,
) -> HookAnswer:
    """Never raises for how the hook ended: the answer says it."""
    with tempfile.TemporaryDirectory(prefix="ink-hook-") as scratch:
        stdin, stderr = Path(scratch) / "event.json", Path(scratch) / "stderr"
        stdin.write_text(json.dumps(event, ensure_ascii=False), encoding="utf-8")
        bash = shutil.which("bash") or "/bin/bash"
        env = {"INK_PROJECT_DIR": str(cwd), "CLAUDE_PROJECT_DIR": str(cwd)}
        try:
            ran = await run_process(
                [bash, "-c", _REDIRECT, hook.command, str(stdin), str(stderr)],
                cwd,
                signal,
                processes,
                hook.timeout,
                kill_delay=kill_delay,
                label=f"{hook.event} hook: {hook.command}",
                env=env,
            )
        except OSError as exc:
            return HookAnswer(problem=f"{hook.label} could not start: {exc.strerror or exc}")
        errors = stderr.read_text(encoding="utf-8", errors="replace").strip() if stderr.exists() else ""
    if ran.interrupted:
        return HookAnswer(problem=f"{hook.label} was stopped by the abort")
    if ran.timed_out:
        return HookAnswer(problem=f"{hook.label} did not finish within {hook.timeout:g} s and was killed")
    if ran.exit_code == 2:
        return HookAnswer("deny", errors or f"blocked by {hook.label}")
    if ran.exit_code != 0:
        detail = f": {errors[-500:]}" if errors else ""
        return HookAnswer(problem=f"{hook.label} failed with exit status {ran.exit_code}{detail}")
    return read_answer(ran.output)


def read_answer(stdout: str) -> HookAnswer:
    """A successful hook's stdout: Claude Code's JSON shape (and ink's short one), or plain text."""
    text = stdout.strip()
    try:
        data = json.loads(text) if text.startswith("{") else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return HookAnswer(context=text)
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    decision = HOOK_VERDICTS.get(str(specific.get("permissionDecision") or data.get("decision") or ""))
    reason = _text(specific.get("permissionDecisionReason") or data.get("reason"))
    if data.get("continue") is False:  # Claude Code: stop here; the reason is for the user
        decision, reason = "deny", _text(data.get("stopReason")) or reason or "a hook said not to continue"
    context = _text(specific.get("additionalContext") or data.get("additionalContext") or data.get("context"))
    return HookAnswer(decision, reason, context, _text(data.get("systemMessage")))


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""
