"""``/init``: the model looks at the project and writes its AGENTS.md (or improves the one there).

A prompt submitted as a custom command's is (the scrollback shows ``/init``); the model does the work
with its tools, under the permission mode in force, so writing the file asks like any other change.
"""

from __future__ import annotations

from pathlib import Path

FILE_NAME = "AGENTS.md"
EXPLORE = """\
Look at this project, then {task}

First explore: the README and docs, the build and package files (pyproject.toml, package.json, \
Cargo.toml, go.mod, Makefile and the like), the CI configuration, the layout of the source and test \
folders, and a few representative source and test files. Read CLAUDE.md, .cursorrules, \
.cursor/rules/ and .github/copilot-instructions.md too if they exist, and keep what they say that holds.

AGENTS.md is what a coding agent (and a new contributor) reads before working here. Keep it short and \
concrete:
- what the project is, in two or three sentences;
- the exact commands to set up, build, run, test (the whole suite and a single test), lint and format;
- the architecture in a few lines: the main folders and what each holds, how the parts fit;
- the conventions the code actually follows (style, naming, error handling, how tests are written);
- anything surprising or easy to get wrong.
Write only what you verified in the files: no generic advice, no guesses."""
NEW = f"write {FILE_NAME} at its root: the instructions for working on it."
EXISTING = (
    f"improve the {FILE_NAME} at its root: read it first; keep what is still true, correct what is "
    "not, add what is missing, and remove what is stale; do not start over."
)


def init_prompt(cwd: Path) -> str:
    """The prompt ``/init`` submits in ``cwd``: to write AGENTS.md, or to improve the one there."""
    exists = (cwd / FILE_NAME).is_file()
    return EXPLORE.format(task=EXISTING if exists else NEW)
