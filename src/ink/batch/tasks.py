"""The task file: one JSON object per line, checked whole before anything runs.

    {"id": "fix-1", "prompt": "...", "repo": "toys/calc", "rev": "main", "setup": "...", "check": "..."}

``repo`` is a local directory or a git repository (a URL or a path); a relative path is taken from the
task file's own directory. Optional per-task overrides of the batch's settings: ``model``, ``provider``,
``maxIterations``, ``permissionMode``, ``allow``, ``deny`` (lists of rules) and ``timeoutSeconds``.
A bad line is a ``TaskFileError`` naming ``file:line``: a batch never starts half-checked. The file is
read a line at a time and checked as it is read (a line holds at most 1 MiB, a file at most
``MAX_TASKS`` tasks), so a bad line is named as soon as it is reached and a huge file costs no more
memory than its tasks. It may be a pipe (``ink batch <(make-tasks) ...``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import msgspec

MAX_LINE_BYTES = 1 << 20
MAX_TASKS = 100_000
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")  # ids name files and directories
_TEXT_FIELDS = ("id", "prompt", "repo", "rev", "setup", "check", "model", "provider", "permissionMode")
_LIMITS = ("maxCostUsd", "maxTokens", "maxSeconds")  # R45: the task's budget (ink -p's --max-*)
_KNOWN = {*_TEXT_FIELDS, "maxIterations", "allow", "deny", "timeoutSeconds", *_LIMITS}
_REQUIRED = ("id", "prompt", "repo")


class TaskFileError(Exception):
    """The task file cannot be used; the message names the file and line."""


class Overrides(msgspec.Struct, frozen=True):
    """Settings one task changes for itself; ``None`` keeps the batch's."""

    model: str | None = None
    provider: str | None = None
    max_iterations: int | None = None
    permission_mode: str | None = None
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    timeout_seconds: float | None = None
    max_cost_usd: float | None = None
    max_tokens: int | None = None
    max_seconds: float | None = None


class Task(msgspec.Struct, frozen=True):
    id: str
    prompt: str
    repo: str  # absolute path, or a URL as given
    rev: str | None = None
    setup: str | None = None
    check: str | None = None
    overrides: Overrides = msgspec.field(default_factory=Overrides)


def read_tasks(path: Path) -> list[Task]:
    """Every task of ``path``, in file order. Raises ``TaskFileError``."""
    tasks: list[Task] = []
    seen: set[str] = set()
    try:
        with open(path, "rb") as file:
            for number, line in enumerate(iter(lambda: file.readline(MAX_LINE_BYTES + 1), b""), start=1):
                if not line.strip():
                    continue
                try:
                    task = _checked(line, path.parent, seen, len(tasks))
                except TaskFileError as exc:
                    raise TaskFileError(f"{path}:{number}: {exc}") from None
                seen.add(task.id)
                tasks.append(task)
    except OSError as exc:
        raise TaskFileError(f"cannot read the task file {path}: {exc.strerror or exc}") from None
    if not tasks:
        raise TaskFileError(f"{path}: no tasks (one JSON object per line)")
    return tasks


def _checked(line: bytes, base: Path, seen: set[str], count: int) -> Task:
    if count >= MAX_TASKS:
        raise TaskFileError(f"more than {MAX_TASKS:,} tasks: split the file into several batches")
    task = _task(_object(line), base)
    if task.id in seen:
        raise TaskFileError(f"task id {task.id!r} was used before")
    return task


def _object(line: bytes) -> dict[str, Any]:
    if len(line.rstrip(b"\r\n")) > MAX_LINE_BYTES:
        raise TaskFileError("the line is longer than 1 MiB")
    try:
        value = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError:
        raise TaskFileError("the line is not UTF-8") from None
    except (ValueError, RecursionError) as exc:
        raise TaskFileError(f"not JSON: {str(exc)[:120]}") from None
    if not isinstance(value, dict):
        raise TaskFileError(f"a task is a JSON object, got {type(value).__name__}")
    return value


def _task(obj: dict[str, Any], base: Path) -> Task:
    unknown = sorted(set(obj) - _KNOWN)
    if unknown:
        raise TaskFileError(f"unknown field {unknown[0]!r} (known: {', '.join(sorted(_KNOWN))})")
    for name in _REQUIRED:
        if not obj.get(name):
            raise TaskFileError(f"missing field {name!r}")
    for name in _TEXT_FIELDS:
        if name in obj and obj[name] is not None and not isinstance(obj[name], str):
            raise TaskFileError(f"{name!r} must be a string")
    if not _ID.match(obj["id"]):
        raise TaskFileError(f"id {obj['id'][:80]!r}: use letters, digits, '.', '_' and '-' (at most 128)")
    return Task(
        id=obj["id"],
        prompt=obj["prompt"],
        repo=_repo(obj["repo"], base),
        rev=obj.get("rev") or None,
        setup=obj.get("setup") or None,
        check=obj.get("check") or None,
        overrides=_overrides(obj),
    )


def _repo(repo: str, base: Path) -> str:
    if is_remote(repo):
        return repo
    return str((base / Path(repo).expanduser()).resolve())


def is_remote(repo: str) -> bool:
    """A URL (``https://``, ``ssh://``, ``file://``) or scp-like ``user@host:path``: cloned with git."""
    return "://" in repo or re.match(r"^[\w.-]+@[\w.-]+:", repo) is not None


def _overrides(obj: dict[str, Any]) -> Overrides:
    return Overrides(
        model=obj.get("model"),
        provider=obj.get("provider"),
        max_iterations=_count(obj, "maxIterations"),
        permission_mode=obj.get("permissionMode"),
        allow=_rules(obj, "allow"),
        deny=_rules(obj, "deny"),
        timeout_seconds=_seconds(obj, "timeoutSeconds"),
        max_cost_usd=_amount(obj, "maxCostUsd"),
        max_tokens=_count(obj, "maxTokens"),
        max_seconds=_amount(obj, "maxSeconds"),
    )


def _count(obj: dict[str, Any], name: str) -> int | None:
    value = obj.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise TaskFileError(f"{name!r} must be a whole number >= 0")
    return value


def _seconds(obj: dict[str, Any], name: str) -> float | None:
    value = obj.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1e7:
        raise TaskFileError(f"{name!r} must be a number of seconds > 0")
    return float(value)


def _amount(obj: dict[str, Any], name: str) -> float | None:
    value = obj.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 1e12:
        raise TaskFileError(f"{name!r} must be a number >= 0 (0: no limit)")
    return float(value)


def _rules(obj: dict[str, Any], name: str) -> tuple[str, ...]:
    value = obj.get(name, [])
    if not isinstance(value, list) or not all(isinstance(rule, str) for rule in value):
        raise TaskFileError(f"{name!r} must be a list of rules (strings)")
    return tuple(value)
