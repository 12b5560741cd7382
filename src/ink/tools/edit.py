"""edit: exact text replacement in one file, one edit or several applied all-or-nothing, with a diff.

The file is written back in its own encoding and line endings: the model's ``\\n`` text matches a CRLF
file (normalised, then restored), a BOM stays, latin-1 stays latin-1.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from typing import Any

from ink.agent.tool import CallDescription, ToolCallContext, ToolOutput
from ink.ai.details import MAX_KEPT_TEXT, FileDiff, file_diff
from ink.tools.base import ArgumentError, BaseTool, arg_str, error, get_bool, get_str, object_schema
from ink.tools.files import (
    BinaryFile,
    PinnedFile,
    TextContent,
    decode_text,
    describe_os_error,
    pin,
    write_pinned,
)
from ink.tools.limits import cap_head, plural
from ink.tools.replace import EditRefused, Replacement, apply_edits
from ink.tools.workspace import Workspace, written_paths

DESCRIPTION = """Edit a file by exact text replacement, and get a unified diff of the change.
- One edit: `path`, `old_text`, `new_text`, optional `replace_all`.
- Several edits to one file: `path` and `edits`, a list of {old_text, new_text, replace_all?}. They apply in \
order, each to the result of the previous one, and all or nothing: if one fails, the file is not changed.
- `old_text` must match the file exactly, whitespace and indentation included (copy it from `read` output, \
without the line-number prefix), and must occur once, unless `replace_all` is true. Include enough \
surrounding lines to make it unique; an error lists the lines of every match.
- Line endings and encoding are kept: write `\\n` in your text even for a CRLF file.
- To create a file, or to replace all of it, use `write`."""

_EDIT_ITEM = {
    "type": "object",
    "properties": {
        "old_text": {"type": "string", "description": "Exact text to replace."},
        "new_text": {"type": "string", "description": "Replacement text."},
        "replace_all": {"type": "boolean", "description": "Replace every occurrence (default false)."},
    },
    "required": ["old_text", "new_text"],
    "additionalProperties": False,
}


class EditTool(BaseTool):
    name = "edit"
    description = DESCRIPTION
    parameters = object_schema(
        {
            "path": {"type": "string", "description": "File to edit."},
            "old_text": {"type": "string", "description": "Exact text to replace (single-edit form)."},
            "new_text": {"type": "string", "description": "Replacement text (single-edit form)."},
            "replace_all": {"type": "boolean", "description": "Replace every occurrence (default false)."},
            "edits": {
                "type": "array",
                "items": _EDIT_ITEM,
                "minItems": 1,
                "description": "Several edits, applied in order, all or nothing (instead of old_text).",
            },
        },
        ["path"],
    )
    safe = False
    kind = "edit"

    def __init__(self, workspace: Workspace) -> None:
        self._workspace = workspace

    def describe(self, args: Mapping[str, Any]) -> CallDescription:
        """Paths: the file that really changes (symlinks followed), then the path as named. Preview: the
        file as it will be against the file as it is (read now, the edits applied in memory); when that
        cannot be worked out (no such file, an edit that would be refused), one diff per replacement of
        the texts given."""
        given = arg_str(args, "path")
        if not given:
            return CallDescription(self.title(args))
        named = self._workspace.resolve(given)
        paths = written_paths(self._workspace, given)
        planned = self._plan_quietly(given, args)
        if planned is not None:
            content, new_text, _counts, shown = planned
            whole = file_diff(str(named), content.text, new_text, unified_diff(content.text, new_text, shown))
            return CallDescription(self.title(args), paths, preview=(whole,))
        try:
            edits = parse_edits(args)  # the one reading of an edit's arguments, as run reads them
        except ArgumentError:
            edits = []  # the call fails validation: nothing to preview
        preview = tuple(FileDiff(str(named), edit.old_text, edit.new_text) for edit in edits)
        return CallDescription(self.title(args), paths, preview=preview)

    def title(self, args: Mapping[str, Any]) -> str:
        """The title of ``describe``, without reading the file (``ink.agent.tool.call_title``)."""
        return f"edit {arg_str(args, 'path') or '?'}"

    def _plan_quietly(
        self, given: str, args: Mapping[str, Any]
    ) -> tuple[TextContent, str, list[int], str] | None:
        """The edit worked out without writing anything; None when it would fail (its error shows then)."""
        shown = self._workspace.display(self._workspace.resolve(given), given)
        try:
            if os.path.getsize(self._workspace.resolve(given)) > MAX_KEPT_TEXT:
                return None  # describe runs on the event loop: only files small enough to keep whole
            with pin(self._workspace.root, given) as target:
                planned = self._plan(target, shown, parse_edits(args))
        except (ArgumentError, ValueError, OSError):
            return None
        return None if isinstance(planned, ToolOutput) else (*planned, shown)

    async def execute(self, args: Mapping[str, Any], ctx: ToolCallContext) -> ToolOutput:
        given = get_str(args, "path")
        edits = parse_edits(args)
        return await asyncio.to_thread(self.edit_sync, given, edits)

    def edit_sync(self, given: str, edits: list[Replacement]) -> ToolOutput:
        """Read, change and write back the file through its held folder (``files.pin``)."""
        path = self._workspace.resolve(given)
        shown = self._workspace.display(path, given)
        try:
            target = pin(self._workspace.root, given)
        except OSError as exc:
            return _read_error(exc, shown)
        with target:
            planned = self._plan(target, shown, edits)
            if isinstance(planned, ToolOutput):
                return planned
            content, new_text, counts = planned
            try:
                data = content.encode(new_text)
            except UnicodeEncodeError as exc:
                bad = exc.object[exc.start : exc.end]
                return error(
                    f"No change made to {shown}: it is {content.encoding} text, which cannot hold {bad!r}."
                )
            try:
                write_pinned(target, data)
            except OSError as exc:
                return error(f"{describe_os_error(exc, shown, 'write')}.")
        diff = unified_diff(content.text, new_text, shown)
        detail = file_diff(str(path), content.text, new_text, diff)
        return ToolOutput(_summary(shown, counts) + "\n\n" + diff, details=(detail,))

    def _plan(
        self, target: PinnedFile, shown: str, edits: list[Replacement]
    ) -> tuple[TextContent, str, list[int]] | ToolOutput:
        """The file's content, its text once edited and the count of each replacement; or the error
        result when the file cannot be read or an edit is refused."""
        try:
            content = decode_text(target.read_bytes())
        except OSError as exc:
            return _read_error(exc, shown)
        except BinaryFile as exc:
            return error(f"Cannot edit {shown}: {exc}.")
        try:
            normalised = [_normalise(edit, content) for edit in edits]
            new_text, counts = apply_edits(content.text, normalised, crlf_aware="\r\n" in content.text)
        except EditRefused as exc:
            return error(f"No change made to {shown}. {exc}")
        return content, new_text, counts


def _read_error(exc: OSError, shown: str) -> ToolOutput:
    if isinstance(exc, IsADirectoryError):
        return error(f"{shown} is a directory; edit changes files.")
    if isinstance(exc, FileNotFoundError):
        return error(f"File not found: {shown}. To create a file use write.")
    return error(f"{describe_os_error(exc, shown)}.")


def parse_edits(args: Mapping[str, Any]) -> list[Replacement]:
    """The edits of a call, in either form. Raises ``ArgumentError`` when the forms are mixed or missing."""
    single = "old_text" in args or "new_text" in args
    if "edits" in args:
        if single:
            raise ArgumentError("give either old_text/new_text or edits, not both")
        items = args["edits"]
        if not isinstance(items, list) or not items:
            raise ArgumentError("edits must be a non-empty list of {old_text, new_text, replace_all?}")
        return [_replacement(item, f"edits[{i}].") for i, item in enumerate(items)]
    if not single:
        raise ArgumentError("old_text and new_text are required (or edits, for several changes)")
    return [_replacement(args, "")]


def _replacement(item: object, where: str) -> Replacement:
    if not isinstance(item, Mapping):
        raise ArgumentError(f"{where.rstrip('.')} must be an object with old_text and new_text")
    try:
        return Replacement(
            get_str(item, "old_text"), get_str(item, "new_text"), get_bool(item, "replace_all", False)
        )
    except ArgumentError as exc:
        raise ArgumentError(f"{where}{exc}") from None


def _normalise(edit: Replacement, content: TextContent) -> Replacement:
    if not content.crlf:
        return edit
    return Replacement(
        edit.old_text.replace("\r\n", "\n"), edit.new_text.replace("\r\n", "\n"), edit.replace_all
    )


def _summary(shown: str, counts: list[int]) -> str:
    total = sum(counts)
    edits = f" in {plural(len(counts), 'edit')}" if len(counts) > 1 else ""
    return f"Edited {shown}: {plural(total, 'replacement')}{edits}."


def unified_diff(old: str, new: str, shown: str) -> str:
    """A git-style unified diff (3 lines of context), capped like any tool output."""
    import difflib  # here: a run that edits no file does not import it

    lines = []
    for line in difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{shown}", f"b/{shown}", n=3
    ):
        lines.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    text, cut = cap_head("".join(lines))
    return text + (f"[... {plural(cut, 'more diff line')} not shown]\n" if cut else "")
