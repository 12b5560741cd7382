"""Structured results of a tool call for the user only: never sent to the model.

A tool returns, besides the text the model reads, ``details`` that frontends show their own way: the TUI
draws a diff, ACP sends it as a diff, a client reads an exit status without parsing text. They travel in
the result of ``tool_settled``/``tool_end`` (RPC, stream-json, ACP) and in the session file; provider
request builders read only ``ToolResult.output``. Each detail is frozen data tagged by ``type``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal, TypeAlias

import msgspec

MAX_KEPT_TEXT = 256 * 1024  # characters of a file's whole text kept in a diff; larger ones keep the diff only


class FileDiff(msgspec.Struct, frozen=True):
    """A file a call changed. ``before`` is None for a file the call created; ``before``/``after`` are
    both None when the file was too large to keep whole (``unified`` is still there)."""

    path: str
    before: str | None
    after: str | None
    unified: str = ""
    type: Literal["file_diff"] = "file_diff"
    # written as null when None (ink.ai.jsonform)
    json_always: ClassVar[tuple[str, ...]] = ("before", "after")


class ExitStatus(msgspec.Struct, frozen=True):
    """How a command ended. ``exit_code``: its status, negative when a signal ended it, None when it could
    not be collected. ``signal``: the strongest signal ink sent it (``SIGTERM``, ``SIGKILL``), if any."""

    exit_code: int | None
    signal: str | None = None
    timed_out: bool = False
    interrupted: bool = False
    type: Literal["exit_status"] = "exit_status"
    json_always: ClassVar[tuple[str, ...]] = ("exit_code",)  # written as null when None (ink.ai.jsonform)


class SandboxReport(msgspec.Struct, frozen=True):
    """What the sandbox did to a command (R41). ``sandbox``: ``"denied"`` when it refused something the
    command tried (``kind``: ``write``, ``read``, ``network`` or ``signal``; ``target``: the path, process or
    error line), ``"error"`` when it could not be set up and nothing ran, ``"off"`` when the call ran
    outside it with the user's leave."""

    sandbox: Literal["denied", "error", "off"]
    kind: str = ""
    target: str = ""
    type: Literal["sandbox"] = "sandbox"


class JobReport(msgspec.Struct, frozen=True):
    """The call started a background job (R43): its id (for ``job_output``, ``job_kill``, RPC
    ``kill_job``) and the pid of its process group."""

    job_id: str
    pid: int
    type: Literal["job"] = "job"


ToolDetail: TypeAlias = FileDiff | ExitStatus | SandboxReport | JobReport


def file_diff(path: str, before: str | None, after: str, unified: str) -> FileDiff:
    """A ``FileDiff`` that keeps whole texts only while they are small enough to carry in every event."""
    if len(after) > MAX_KEPT_TEXT or (before is not None and len(before) > MAX_KEPT_TEXT):
        return FileDiff(path, None, None, unified)
    return FileDiff(path, before, after, unified)


def detail_from_json(data: Mapping[str, Any]) -> ToolDetail:
    """Parse one detail back (session files). Raises ``ValueError`` on anything malformed."""
    match data.get("type"):
        case "file_diff":
            return FileDiff(
                str(data["path"]), _text(data.get("before")), _text(data.get("after")), str(data["unified"])
            )
        case "exit_status":
            code = data.get("exitCode")
            if code is not None and not isinstance(code, int):
                raise ValueError(f"exit code must be an integer, not {code!r}")
            return ExitStatus(
                code, _text(data.get("signal")), bool(data.get("timedOut")), bool(data.get("interrupted"))
            )
        case "sandbox":
            verdict = data.get("sandbox")
            if verdict not in ("denied", "error", "off"):
                raise ValueError(f"unknown sandbox verdict {verdict!r}")
            return SandboxReport(verdict, str(data.get("kind") or ""), str(data.get("target") or ""))
        case "job":
            pid = data.get("pid")
            if not isinstance(pid, int) or isinstance(pid, bool):
                raise ValueError(f"a job's pid must be an integer, not {pid!r}")
            return JobReport(str(data["jobId"]), pid)
        case other:
            raise ValueError(f"unknown tool detail type {other!r}")


def _text(value: object) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise ValueError(f"expected text, got {value!r}")
