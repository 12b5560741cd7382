"""``@path`` in a prompt: the file's text (or a folder's listing) goes with it, bounded (issue 12).

``attach`` turns ``look at @src/app.py`` into the prompt the model gets: the text as typed, then one
``<attached path="...">`` section per mention. ``typed_part`` gives back what the user typed (the
scrollback shows that, and an interrupted prompt comes back into the editor as typed). Paths resolve
against the working directory; a path that does not exist is left as it is (an e-mail address, a
decorator). ``path_completions`` lists what Tab offers after ``@``: one folder level at a time, entries
ignored by .gitignore left out, folders ending in ``/``.

Images (``@shot.png``) are not attached: ink's messages carry text only, so the user is told so.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ink.tools.ignore import IgnoreRules

MENTION = re.compile(r"(?<!\S)@((?:[^\s\\]|\\ )+)")
MAX_FILE_BYTES = 64 * 1024  # of one mentioned file
MAX_TOTAL_BYTES = 256 * 1024  # of all the mentions of one prompt
MAX_LISTING = 200  # entries of a mentioned folder
MAX_COMPLETIONS = 50
IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp"})
SECTION = '\n\n<attached path="'


@dataclass(frozen=True, slots=True)
class Attached:
    prompt: str  # what the model gets
    paths: tuple[str, ...]  # the mentions attached, as typed
    problems: tuple[str, ...]  # one line per mention that could not go (an image, too much text)


def attach(text: str, cwd: Path) -> Attached:
    sections: list[str] = []
    paths: list[str] = []
    problems: list[str] = []
    budget = MAX_TOTAL_BYTES
    for typed in dict.fromkeys(m.group(1).replace("\\ ", " ") for m in MENTION.finditer(text)):
        path = (cwd / typed).resolve() if not Path(typed).is_absolute() else Path(typed)
        if not path.exists():
            continue
        if path.suffix.lower() in IMAGE_SUFFIXES:
            problems.append(f"@{typed}: images cannot be attached yet (ink sends text only); not sent")
            continue
        body = _listing(path, cwd) if path.is_dir() else _file_text(path)
        if body is None:
            problems.append(f"@{typed}: not a text file; not attached")
            continue
        if len(body.encode()) > budget:
            limit = MAX_TOTAL_BYTES // 1024
            problems.append(f"@{typed}: over the {limit} KB one prompt may attach; not attached")
            continue
        budget -= len(body.encode())
        sections.append(f'{SECTION}{typed}">\n{body}\n</attached>')
        paths.append(typed)
    return Attached(text + "".join(sections), tuple(paths), tuple(problems))


def typed_part(prompt: str) -> str:
    """The prompt as the user typed it, without its attachments."""
    return prompt.split(SECTION, 1)[0]


def shown_prompt(prompt: str) -> str:
    """What the scrollback shows of a prompt: as typed, and how many mentions went with it."""
    typed = typed_part(prompt)
    count = prompt.count(SECTION)
    return typed + (f"  (+{count} attached)" if count else "")


def _file_text(path: Path) -> str | None:
    try:
        with path.open("rb") as file:
            data = file.read(MAX_FILE_BYTES + 1)
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    text = data[:MAX_FILE_BYTES].decode("utf-8", "replace")
    if len(data) > MAX_FILE_BYTES:
        text += f"\n… (cut at {MAX_FILE_BYTES // 1024} KB; read the file for the rest)"
    return text


def _listing(folder: Path, cwd: Path) -> str:
    names = [name for name, _ in _entries(folder, cwd, "")]
    more = [f"… {len(names) - MAX_LISTING} more"] if len(names) > MAX_LISTING else []
    return "\n".join([*names[:MAX_LISTING], *more])


def _entries(folder: Path, cwd: Path, prefix: str) -> list[tuple[str, bool]]:
    """(name, is folder) of the entries of ``folder`` starting with ``prefix``, not ignored, sorted;
    folders with a trailing ``/``."""
    try:
        with os.scandir(folder) as scan:
            found = [(e.name, e.is_dir()) for e in scan if e.name.startswith(prefix)]
    except OSError:
        return []
    rules = IgnoreRules.for_folder(folder, cwd)
    kept = [(n, d) for n, d in sorted(found) if not rules.ignored(folder / n, d)]
    return [(n + "/" if d else n, d) for n, d in kept]


def path_completions(typed: str, cwd: Path) -> list[str]:
    """What ``@typed`` may become: ``typed`` with one more path segment (``src/`` -> ``src/app.py``)."""
    head, _, prefix = typed.rpartition("/")
    folder = (cwd / head) if head else cwd
    if not folder.is_dir():
        return []
    entries = _entries(folder, cwd, prefix)
    if not prefix.startswith("."):
        entries = [(n, d) for n, d in entries if not n.startswith(".")]  # hidden ones when asked for
    base = f"{head}/" if head else ""
    return [base + name for name, _ in entries[:MAX_COMPLETIONS]]
