"""read: a text file with line numbers, a page at a time.

The file is streamed line by line, so showing the first page of a huge file costs one page of work (plus
a chunked newline count for the footer); one enormous line is skipped over in chunks, never held whole.
"""

from __future__ import annotations

import asyncio
import codecs
import os
import stat
from collections.abc import Iterator, Mapping
from typing import IO, Any

from ink.agent.tool import CallDescription, ToolCallContext, ToolOutput
from ink.regular_file import open_regular
from ink.tools.base import BaseTool, arg_str, error, get_int, get_str, object_schema
from ink.tools.files import SAMPLE_BYTES, BinaryFile, describe_os_error, sniff_encoding
from ink.tools.limits import MAX_LINE_CHARS, MAX_OUTPUT_BYTES, MAX_OUTPUT_LINES, utf8_len
from ink.tools.workspace import Workspace

COUNT_LIMIT_BYTES = 256 * 1024 * 1024
"""Files up to this size get an exact line count in the footer; bigger ones are not scanned to the end."""
_CHUNK = 1024 * 1024

DESCRIPTION = f"""Read a text file. Lines come numbered like `cat -n` (number, tab, text); the numbers are \
not part of the file.
- `path`: relative to the working directory, or absolute.
- Shows up to {MAX_OUTPUT_LINES} lines or {MAX_OUTPUT_BYTES // 1000} KB from `offset` (1-based line number, \
default 1); `limit` sets how many lines. A footer says when more lines follow and which offset reads on.
- Lines longer than {MAX_LINE_CHARS} characters are cut, with a notice.
- Binary files are refused. For a directory use `ls` or `glob`."""


class ReadTool(BaseTool):
    name = "read"
    description = DESCRIPTION
    parameters = object_schema(
        {
            "path": {"type": "string", "description": "File to read."},
            "offset": {"type": "integer", "minimum": 1, "description": "First line to show (1-based)."},
            "limit": {"type": "integer", "minimum": 1, "description": "How many lines to show."},
        },
        ["path"],
    )
    safe = True
    kind = "read"

    def __init__(self, workspace: Workspace) -> None:
        self._workspace = workspace

    def describe(self, args: Mapping[str, Any]) -> CallDescription:
        given = arg_str(args, "path")
        offset = args.get("offset")
        line = offset if isinstance(offset, int) and not isinstance(offset, bool) and offset >= 1 else None
        at = f" (from line {offset})" if line is not None and line > 1 else ""
        paths = (self._workspace.resolve(given),) if given else ()
        return CallDescription(f"read {given or '?'}{at}", paths, line=line)

    async def execute(self, args: Mapping[str, Any], ctx: ToolCallContext) -> ToolOutput:
        given = get_str(args, "path")
        offset = get_int(args, "offset", 1, minimum=1) or 1
        limit = get_int(args, "limit", MAX_OUTPUT_LINES, minimum=1) or MAX_OUTPUT_LINES
        return await asyncio.to_thread(self.read_sync, given, offset, limit)

    def read_sync(self, given: str, offset: int, limit: int) -> ToolOutput:
        path = self._workspace.resolve(given)
        shown = self._workspace.display(path, given)
        try:
            info = os.stat(path)
            if stat.S_ISDIR(info.st_mode):
                return error(
                    f"{shown} is a directory, not a file. Use ls to list it or glob to find files in it."
                )
            if not stat.S_ISREG(info.st_mode):
                return error(
                    f"{shown} is not a regular file (a device, socket or pipe); read shows files only."
                )
            with open_regular(path) as stream:  # swapped for a FIFO since the stat: refused, no wait
                return _render(stream, shown, offset, limit, info.st_size)
        except OSError as exc:
            return error(describe_os_error(exc, shown) + _missing_hint(exc, path))
        except BinaryFile as exc:
            return error(f"Cannot read {shown}: {exc}. read shows text files only.")


def _render(stream: IO[bytes], shown: str, offset: int, limit: int, size: int) -> ToolOutput:
    encoding = sniff_encoding(stream.read(SAMPLE_BYTES))
    stream.seek(0)
    out: list[str] = []
    budget = MAX_OUTPUT_BYTES
    consumed = 0  # lines read from the stream so far
    cut_by_size = False
    for raw, length in _lines(stream, MAX_LINE_CHARS * 4):
        consumed += 1
        if consumed < offset:
            continue
        if consumed >= offset + limit:
            break
        line = _format(consumed, raw, length, encoding)
        budget -= utf8_len(line)
        if budget < 0 and out:
            cut_by_size = True
            break
        out.append(line)
    else:  # the whole rest of the file was shown
        if consumed == 0 and offset == 1:
            return ToolOutput("[The file is empty.]\n")
        if consumed < offset:
            return _past_end(shown, offset, consumed)
        return ToolOutput("".join(out))
    total = _count_rest(stream, size, consumed)
    last = offset + len(out) - 1
    return ToolOutput("".join(out) + _footer(offset, last, total, cut_by_size))


def _lines(stream: IO[bytes], keep: int) -> Iterator[tuple[bytes, int]]:
    """Yield (first ``keep`` bytes of the line, length of its text in bytes without the line ending).

    A longer line is skipped over in chunks, so memory stays bounded whatever the file holds.
    """
    while True:
        head = stream.readline(keep)
        if not head:
            return
        length, tail = len(head), head
        if len(head) == keep and not head.endswith(b"\n"):
            while more := stream.readline(_CHUNK):
                length, tail = length + len(more), more
                if more.endswith(b"\n"):
                    break
        yield head, length - _ending_length(tail)


def _ending_length(line: bytes) -> int:
    if line.endswith(b"\r\n"):
        return 2
    return 1 if line.endswith(b"\n") else 0


def _format(number: int, raw: bytes, length: int, encoding: str) -> str:
    codec = "utf-8" if encoding == "utf-8-sig" else encoding
    text = raw.decode(codec, "replace")
    if number == 1 and text.startswith("\ufeff"):
        text, length = text[1:], length - len(codecs.BOM_UTF8)
    text = text.removesuffix("\n").removesuffix("\r")
    if len(text) > MAX_LINE_CHARS or length > len(raw):
        kept = text[:MAX_LINE_CHARS]
        cut = length - len(kept.encode(codec, "replace"))
        text = f"{kept} [... line cut: {cut} more bytes]"
    return f"{number:>6}\t{text}\n"


def _count_rest(stream: IO[bytes], size: int, consumed: int) -> int | None:
    """Total line count: ``consumed`` lines already read plus the rest, scanned in chunks; None if huge."""
    if size > COUNT_LIMIT_BYTES:
        return None
    newlines = 0
    last = b""
    while chunk := stream.read(_CHUNK):
        newlines += chunk.count(b"\n")
        last = chunk
    return consumed + newlines + (1 if last and not last.endswith(b"\n") else 0)


def _footer(offset: int, last: int, total: int | None, cut_by_size: bool) -> str:
    if total is not None and last >= total:
        return ""
    of_total = f" of {total}" if total is not None else ""
    why = f" (output capped at {MAX_OUTPUT_BYTES // 1000} KB)" if cut_by_size else ""
    return f"\n[Showing lines {offset}-{last}{of_total}{why}. Use offset={last + 1} to read more.]\n"


def _past_end(shown: str, offset: int, total: int) -> ToolOutput:
    if total == 0:
        return error(f"{shown} is empty; there is no line {offset}.")
    return error(f"offset {offset} is past the end of {shown}, which has {total} lines.")


def _missing_hint(exc: OSError, path: os.PathLike[str]) -> str:
    """For a missing file, name near matches in its folder: models often guess an extension or case."""
    if not isinstance(exc, FileNotFoundError):
        return ""
    import difflib

    folder, name = os.path.split(os.fspath(path))
    try:
        siblings = os.listdir(folder)
    except OSError:
        return ""
    close = difflib.get_close_matches(name, siblings, n=3, cutoff=0.6)
    return f". Similar names in that folder: {', '.join(close)}" if close else ""
