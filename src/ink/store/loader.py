"""Reading a session file back into a history.

Replays the entries in order (messages appended, compactions applied, model changes noted), then repairs
dangling tool calls (R19) so the history is one a strict API accepts.

Damage policy, chosen so that nothing is lost silently:
- a last line without its newline that does not parse is a write torn by a crash: it is ignored
  (``torn_bytes`` says how much; resuming reports it), and the writer cuts it off before appending
  again. A last line that parses as an entry is complete and kept: the writer ends it with its newline;
- a complete line in the middle that does not parse raises ``CorruptSession`` naming file:line, and the
  file is left as it is. Skipping it could drop an assistant message and orphan its results, or drop a
  compaction and resurrect what it replaced; the user decides instead;
- entry types this version does not know are skipped (a newer ink may add some).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from ink.ai.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResult,
    Usage,
    message_from_json,
    usage_from_json,
)
from ink.ai.models import priced
from ink.store.entries import SessionHeader, decode, ends_complete
from ink.store.errors import CorruptSession, NotASession, SessionError, SessionNotFound
from ink.store.jobs import JobRecord, end_record, start_record

SESSION_ENDED = (
    "No result: the session ended before this call finished. It may not have run, or run only in part."
)


class Repair(msgspec.Struct, frozen=True):
    """What loading had to fix: synthetic results inserted for dangling calls and orphan results
    dropped. ``at_tail``: every inserted result sits at the end of the history."""

    inserted: tuple[ToolResult, ...] = ()
    dropped: tuple[ToolResult, ...] = ()
    at_tail: bool = True

    def __bool__(self) -> bool:
        return bool(self.inserted or self.dropped)


class LoadedSession(msgspec.Struct, frozen=True):
    path: Path
    header: SessionHeader
    messages: tuple[Message, ...]
    model: str
    provider: str
    usage: Usage  # every assistant message ever written, compacted ones included
    cost: float | None  # their price in US dollars; None when a model's prices are unknown
    message_entries: int
    updated: float  # time of the last entry
    torn_bytes: int = 0
    repair: Repair = msgspec.field(default_factory=Repair)
    jobs: tuple[JobRecord, ...] = ()  # the background jobs it records, in the order they started
    plan: Mapping[str, Any] | None = None  # the last plan recorded: {entries, explanation?}


class _Replay:
    def __init__(self, header: SessionHeader) -> None:
        self.messages: list[Message] = []
        self.model = header.model
        self.provider = header.provider
        self.usage = Usage()
        self.cost: float | None = 0.0
        self.message_entries = 0
        self.updated = header.created
        self.inserted: list[ToolResult] = []
        self.dropped: list[ToolResult] = []
        self.jobs: dict[str, JobRecord] = {}
        self.plan: dict[str, Any] | None = None

    def apply(self, entry: dict[str, Any]) -> None:
        """Raises ``ValueError`` with the reason when the entry is malformed."""
        kind = entry["type"]
        if kind == "message":
            message = message_from_json(_field(entry, "message", dict))
            self.messages.append(message)
            self.message_entries += 1
            if isinstance(message, AssistantMessage):
                self._count(message)
        elif kind in ("compaction", "replace"):
            self._replace(entry)
        elif kind == "usage":  # a sub-agent's model call: it counts, its message is elsewhere
            model = str(_field(entry, "model", str))
            self.usage += priced(usage_from_json(_field(entry, "usage", dict)), model)
            self.cost = self.usage.cost_usd
        elif kind == "model_change":
            self.model = str(_field(entry, "model", str))
            self.provider = str(entry.get("provider", self.provider))
        elif kind == "job_start":
            record = start_record(entry)
            self.jobs[record.job_id] = record
        elif kind == "job_end":
            started = self.jobs.get(str(entry.get("jobId")))
            if started is not None:  # an end without its start says nothing to go on
                self.jobs[started.job_id] = end_record(started, entry)
        elif kind == "plan":
            entries = _field(entry, "entries", list)
            explanation = entry.get("explanation")
            self.plan = {"entries": entries} | ({"explanation": explanation} if explanation else {})
        else:
            return
        stamp = entry.get("timestamp")
        if isinstance(stamp, int | float):
            self.updated = float(stamp)

    def _count(self, message: AssistantMessage) -> None:
        self.usage += priced(message.usage, message.model)  # files written before prices were kept
        self.cost = self.usage.cost_usd

    def _replace(self, entry: dict[str, Any]) -> None:
        # The live history was repaired when it was resumed; the counts refer to that repaired list.
        self.repair()
        removed, kept = _field(entry, "removed", int), _field(entry, "kept", int)
        if removed < 0 or removed + kept != len(self.messages):
            raise ValueError(
                f"{entry['type']} entry replaces {removed} and keeps {kept} messages, "
                f"but {len(self.messages)} precede it"
            )
        head = [message_from_json(m) for m in _field(entry, "messages", list)]
        self.messages = head + self.messages[removed:]

    def repair(self) -> None:
        self.messages, inserted, dropped = repair_tool_calls(self.messages)
        self.inserted += inserted
        self.dropped += dropped


def load_session(path: Path) -> LoadedSession:
    """Load, replay and repair the session at ``path``.

    Raises ``SessionNotFound`` when the file does not exist, ``NotASession`` when its first line is not a
    session header, ``CorruptSession`` (file:line) for a damaged complete line, ``SessionError`` when it
    cannot be read. Never modifies the file.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise SessionNotFound(f"{path}: no such session file") from exc
    except OSError as exc:
        raise SessionError(f"{path}: cannot read the session file ({exc.strerror or exc})") from exc
    lines = data.split(b"\n")
    torn = lines.pop()  # b"" when the file ends with a newline
    if torn and ends_complete(data):  # a complete entry whose newline is missing is kept, not torn
        lines.append(torn)
        torn = b""
    if not lines:
        raise NotASession(path, "empty file" if not torn else "no complete first line")
    try:
        header = SessionHeader.from_json(decode(lines[0]))
    except ValueError as exc:
        raise NotASession(path, str(exc)) from exc
    replay = _Replay(header)
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        try:
            replay.apply(decode(line))
        except ValueError as exc:
            raise CorruptSession(path, number, str(exc)) from exc
    before_final = len(replay.inserted)
    replay.repair()
    tail_only = before_final == 0 and _at_tail(replay.messages, replay.inserted)
    return LoadedSession(
        path,
        header,
        tuple(replay.messages),
        replay.model,
        replay.provider,
        replay.usage,
        replay.cost,
        replay.message_entries,
        replay.updated,
        len(torn),
        Repair(tuple(replay.inserted), tuple(replay.dropped), tail_only),
        tuple(replay.jobs.values()),
        replay.plan,
    )


def repair_tool_calls(
    messages: Sequence[Message],
) -> tuple[list[Message], list[ToolResult], list[ToolResult]]:
    """R19 on load: every tool call gets exactly one result, right after the results it already has.

    Returns the repaired list, the synthetic results inserted and the results dropped (a result with no
    call before it, or a second result for one call: a strict API rejects both).
    """
    out: list[Message] = []
    inserted: list[ToolResult] = []
    dropped: list[ToolResult] = []
    pending: dict[str, ToolCall] = {}

    def close_pending() -> None:
        for call in pending.values():
            synthetic = ToolResult(call.id, call.name, SESSION_ENDED, is_error=True)
            out.append(synthetic)
            inserted.append(synthetic)
        pending.clear()

    for message in messages:
        if isinstance(message, ToolResult):
            if pending.pop(message.tool_call_id, None) is not None:
                out.append(message)
            else:
                dropped.append(message)
            continue
        close_pending()
        out.append(message)
        if isinstance(message, AssistantMessage):
            pending = {call.id: call for call in message.tool_calls}
    close_pending()
    return out, inserted, dropped


def _at_tail(messages: Sequence[Message], inserted: Sequence[ToolResult]) -> bool:
    if not inserted:
        return True
    tail = messages[len(messages) - len(inserted) :]
    return all(a is b for a, b in zip(tail, inserted, strict=True))


def _field(entry: dict[str, Any], name: str, kind: type) -> Any:
    value = entry.get(name)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ValueError(f"{entry['type']} entry: '{name}' is missing or not a {kind.__name__}")
    return value
