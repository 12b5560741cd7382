"""``@path`` in a prompt: the file's text (or a folder's listing) goes with it, bounded.

``attach`` turns ``look at @src/app.py`` into the prompt the model gets: the text as typed, then one
``<attached path="...">`` section per mention. ``typed_part`` gives back what the user typed (the
scrollback shows that, and an interrupted prompt comes back into the editor as typed). Paths resolve
against the working directory; a path that does not exist is left as it is (an e-mail address, a
decorator). ``path_completions`` lists what Tab offers after ``@``: one folder level at a time, entries
ignored by .gitignore left out, folders ending in ``/``.

Images (``@shot.png``, or an image's path pasted or dropped into the terminal, ``/tmp/shot.png``) go as
image content of the user message when the model takes images (``ModelInfo.images``); the text gets a
section naming each one. For a model that does not take images, the user is told so and nothing is sent.
"""

from __future__ import annotations

import base64
import os
import re
import shlex
from pathlib import Path

import msgspec

from ink.ai.messages import ToolImage
from ink.ai.models import lookup
from ink.regular_file import FileTooLarge, read_regular
from ink.tools.ignore import IgnoreRules

MENTION = re.compile(r"(?<!\S)@((?:[^\s\\]|\\ )+)")
MAX_FILE_BYTES = 64 * 1024  # of one mentioned file
MAX_TOTAL_BYTES = 256 * 1024  # of all the mentions of one prompt
MAX_LISTING = 200  # entries of a mentioned folder
MAX_COMPLETIONS = 50
IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif"}
IMAGE_TYPES[".webp"] = "image/webp"
MAX_IMAGE_BYTES = 5 * 1024 * 1024  # of one image: the most the services accept
SECTION = '\n\n<attached path="'
# A path to an image pasted or dropped into the terminal: absolute or home-relative, spaces escaped with
# a backslash or the whole path quoted (as terminals paste a dropped file).
PASTED_IMAGE = re.compile(
    r"""(?<![\S@])('(?:[~/][^']*)'|"(?:[~/][^"]*)"|[~/](?:[^\s\\]|\\ )+)"""
    r"""(?=\s|$)"""
)


class Attached(msgspec.Struct, frozen=True):
    prompt: str  # what the model gets
    paths: tuple[str, ...]  # the mentions attached, as typed
    problems: tuple[str, ...]  # one line per mention that could not go (an image, too much text)
    images: tuple[ToolImage, ...] = ()  # go with the prompt as image content


def attach(text: str, cwd: Path, model: str = "") -> Attached:
    """``model``: the model the prompt goes to; images go only to one that takes them."""
    sections: list[str] = []
    paths: list[str] = []
    problems: list[str] = []
    images: list[ToolImage] = []
    budget = MAX_TOTAL_BYTES
    for typed in _mentioned(text):
        path = _resolve(typed, cwd)
        if not path.exists():
            continue
        if _linked_out(typed, cwd, path):
            problems.append(f"@{typed}: a link out of the workspace, to {path}; not attached (@ that path)")
            continue
        if path.suffix.lower() in IMAGE_TYPES:
            image, problem = _image(path, typed, model)
            if image is None:
                problems.append(problem)
                continue
            images.append(image)
            sections.append(f'{SECTION}{typed}">{problem}</attached>')
            paths.append(typed)
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
    return Attached(text + "".join(sections), tuple(paths), tuple(problems), tuple(images))


def _mentioned(text: str) -> list[str]:
    """The paths ``@``-mentioned, then the image paths pasted without ``@``, each once, as typed."""
    typed = [m.group(1).replace("\\ ", " ") for m in MENTION.finditer(text)]
    for match in PASTED_IMAGE.finditer(text):
        raw = match.group(1)
        try:
            [pasted] = shlex.split(raw)  # quotes and escaped spaces, as a shell would read them
        except ValueError:
            continue
        if Path(pasted).suffix.lower() in IMAGE_TYPES:
            typed.append(pasted)
    return list(dict.fromkeys(typed))


def _linked_out(typed: str, cwd: Path, resolved: Path) -> bool:
    """Whether a mention of a workspace file is a link leading out of it: a repository's ``README.md ->
    ../../.ssh/id_rsa`` mentioned as the README would send the key with the prompt. A path typed out of
    the workspace (``@../x``, ``@~/x``, ``@/etc/x``) is what the user asked for."""
    if Path(typed).expanduser().is_absolute():
        return False
    base = cwd.resolve()
    typed_path = Path(os.path.normpath(base / typed))
    return typed_path.is_relative_to(base) and not resolved.is_relative_to(base)


def _resolve(typed: str, cwd: Path) -> Path:
    path = Path(typed).expanduser()
    return path if path.is_absolute() else (cwd / path).resolve()


def _image(path: Path, typed: str, model: str) -> tuple[ToolImage | None, str]:
    """The image at ``path`` and the note naming it in the prompt, or None and why it cannot go."""
    if not lookup(model).images:
        return None, f"{typed}: {model or 'this model'} does not take images; the image was not sent"
    try:
        data = read_regular(path, MAX_IMAGE_BYTES).data  # a FIFO or a device is never opened
    except FileTooLarge:
        limit = MAX_IMAGE_BYTES // (1024 * 1024)
        return None, f"{typed}: the image is over the {limit} MB a model accepts; not sent"
    except OSError as exc:
        return None, f"{typed}: cannot read the image ({exc.strerror or exc}); not sent"
    mime = IMAGE_TYPES[path.suffix.lower()]
    return ToolImage(mime, base64.b64encode(data).decode("ascii")), f"(image, {mime}, {_size(len(data))})"


def _size(count: int) -> str:
    return f"{count} bytes" if count < 1024 else f"{count / 1024:.0f} KB"


def typed_part(prompt: str) -> str:
    """The prompt as the user typed it, without its attachments."""
    return prompt.split(SECTION, 1)[0]


def typed_line(line: str) -> str:
    """A prompt collapsed to one line (as a session listing holds it), without its attachments."""
    return line.split(" " + SECTION.lstrip(), 1)[0]


def shown_prompt(prompt: str, typed: str | None = None) -> str:
    """What the scrollback shows of a prompt: as typed (``typed``, when the prompt sent is not what was
    typed: a custom command's expansion, a paste's placeholder), and how many mentions went with it."""
    count = prompt.count(SECTION)
    return (typed_part(prompt) if typed is None else typed) + (f"  (+{count} attached)" if count else "")


def _file_text(path: Path) -> str | None:
    try:  # a FIFO or a device is never opened (the open of a FIFO would wait for a writer)
        read = read_regular(path, MAX_FILE_BYTES, cut=True)
    except OSError:
        return None
    if b"\0" in read.data[:8192]:
        return None
    text = read.data.decode("utf-8", "replace")
    if read.cut:
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
