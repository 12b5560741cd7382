"""Markdown files with a front matter block, as custom commands and sub-agent types are written:

    ---
    description: Review the staged changes
    allowed-tools: Bash(git diff:*), Read
    ---
    Review the staged changes. Focus on $ARGUMENTS.

The block is the small subset of YAML these files use in practice: ``key: value`` lines, a value in
quotes, an inline list ``[a, b]``, a block list of ``- item`` lines under a key, and ``#`` comments.
Anything else is a ``FrontMatterError`` naming the file and line, so a typo is reported, never guessed
at. Keys are lower-cased with ``_`` spelled ``-`` (``allowed_tools`` and ``allowed-tools`` are one key).
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from ink.regular_file import read_regular

Value = str | list[str]
MAX_MARKDOWN_BYTES = 1 << 20  # a command's prompt or an agent type's system prompt: far more than any needs


class FrontMatterError(ValueError):
    """A front matter block that cannot be read; the text starts with ``path:line:``."""


class MarkdownDoc(msgspec.Struct, frozen=True):
    """A Markdown file read as its front matter fields and its body; ``status``: of the very file read
    (for the owner-and-mode rule of a project's files, ``ink.config.project.untrusted_because``)."""

    path: Path
    fields: dict[str, Value] = msgspec.field(default_factory=dict)
    body: str = ""
    status: os.stat_result | None = None

    def text(self, key: str) -> str | None:
        value = self.fields.get(key)
        if isinstance(value, list):
            return ", ".join(value)
        return value

    def items(self, key: str) -> list[str] | None:
        """A list field; a string is split at commas (``tools: read, grep``). None when absent."""
        value = self.fields.get(key)
        if value is None:
            return None
        parts = value if isinstance(value, list) else split_top_level(value)
        return [p.strip() for p in parts if p.strip()]


def read_markdown(path: Path) -> MarkdownDoc:
    """Raises ``OSError`` when unreadable, not a regular file (a FIFO, a device: never opened) or larger
    than ``MAX_MARKDOWN_BYTES``, ``FrontMatterError`` when the block is malformed."""
    read = read_regular(path, MAX_MARKDOWN_BYTES)
    doc = parse_markdown(path, read.data.decode("utf-8", errors="replace"))
    return msgspec.structs.replace(doc, status=read.status)


def parse_markdown(path: Path, text: str) -> MarkdownDoc:
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return MarkdownDoc(path, {}, text.strip())
    for end in range(1, len(lines)):
        if lines[end].strip() == "---":
            fields = _fields(path, lines[1:end])
            return MarkdownDoc(path, fields, "\n".join(lines[end + 1 :]).strip())
    raise FrontMatterError(f"{path}:1: the front matter block opened by --- is never closed by ---")


def _fields(path: Path, lines: list[str]) -> dict[str, Value]:
    fields: dict[str, Value] = {}
    key: str | None = None  # the key a block list belongs to
    for number, raw in enumerate(lines, start=2):
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        stripped = line.strip()
        if stripped.startswith("- ") and key is not None and isinstance(fields[key], list):
            fields[key].append(_scalar(stripped[2:]))  # type: ignore[union-attr]
            continue
        name, colon, value = line.partition(":")
        if not colon or not name.strip() or name != name.lstrip():
            raise FrontMatterError(f"{path}:{number}: expected 'key: value', got {stripped!r}")
        key = name.strip().lower().replace("_", "-")
        value = value.strip()
        if not value:
            fields[key] = []  # a block list follows (or the value is empty)
        elif value.startswith("[") and value.endswith("]"):
            fields[key] = [_scalar(v) for v in split_top_level(value[1:-1]) if v.strip()]
        else:
            fields[key] = _scalar(value)
    return fields


def _scalar(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text


def split_top_level(text: str) -> list[str]:
    """Split at commas outside parentheses: ``Bash(git add:*), Read`` is two items."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        depth += {"(": 1, ")": -1}.get(char, 0)
        current.append(char)
    parts.append("".join(current))
    return [_scalar(p) for p in parts]
