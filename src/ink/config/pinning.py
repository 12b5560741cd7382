"""What an approval of a repository's hook or MCP server pins (R40): not only the command line, but what
it runs and what it is given.

    pin = pin_command("bash .ink/h.sh", root, cwd)                      # a hook
    pin = pin_command(["python", "tools/srv.py"], root, cwd, env={"X": "${OPENAI_API_KEY}"})   # a server
    approvals.trusts(key, pin.digest())      # any change below makes another digest: asked again
    question_lines = pin.lines()             # what the user is shown before answering

A ``Pin`` holds the command and its arguments, the names of the environment variables and headers the
program is given (with the text written for each: ``${VAR}`` references, never their values), the
``${VAR}``/``$VAR`` names it pulls from the user's environment, its working folder or URL, and the
content digest of every repository file the command line names (``bash .ink/h.sh``, ``python
tools/srv.py``, ``"$CLAUDE_PROJECT_DIR"/.claude/hooks/check.sh``): a ``git pull`` that changes only the
script changes the digest. Files are read safely (``ink.regular_file``): regular files only (a FIFO or a
device is never opened), at most ``MAX_FILE_BYTES`` of
each (a larger one is pinned by its size and modification time), at most ``MAX_FILES`` files. Only files
inside ``root`` (the folder holding the declaring ``.ink``) are pinned: what a script reads or sources
itself, and programs outside the repository, are out of reach (docs/security.md).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

import msgspec

from ink.regular_file import NotRegularFile, open_regular

MAX_FILE_BYTES = 16 * 1024 * 1024
MAX_FILES = 16
PROJECT_VARIABLES = ("INK_PROJECT_DIR", "CLAUDE_PROJECT_DIR")  # set to the project folder for hooks
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_PUNCTUATION = frozenset(";&|()<>")


class PinnedFile(msgspec.Struct, frozen=True):
    """A repository file the command names: ``path`` relative to the root, and its content's SHA-256
    (``digest``), or why it could not be read whole (``problem``, with a stand-in digest)."""

    path: str
    digest: str
    problem: str = ""


class Pin(msgspec.Struct, frozen=True):
    command: str
    env: tuple[tuple[str, str], ...] = ()  # name, text as written
    headers: tuple[tuple[str, str], ...] = ()
    pulls: tuple[str, ...] = ()  # ${VAR} names read from the user's environment
    cwd: str | None = None
    url: str | None = None
    files: tuple[PinnedFile, ...] = ()

    def digest(self) -> bytes:
        """The bytes an approval is kept by (``ink.store.trust`` hashes them)."""
        return json.dumps(msgspec.to_builtins(self), sort_keys=True, ensure_ascii=False).encode("utf-8")

    def lines(self) -> list[str]:
        """The pin in words, for the approval question: every line is something a change of asks again."""
        shown = [f"runs: {self.url or self.command}"]
        if self.cwd:
            shown.append(f"in: {self.cwd}")
        if self.env:
            shown.append("environment: " + ", ".join(f"{name}={text}" for name, text in self.env))
        if self.headers:
            shown.append("headers: " + ", ".join(name for name, _ in self.headers))
        if self.pulls:
            shown.append("receives your variables: " + ", ".join(self.pulls))
        for file in self.files:
            shown.append(f"pins {file.path}" + (f" ({file.problem})" if file.problem else ""))
        return shown


def pin_command(
    command: str | Sequence[str],
    root: Path,
    cwd: Path,
    *,
    env: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
    url: str | None = None,
    shown_cwd: str | None = None,
) -> Pin:
    """The pin of a command (a shell command line, or a program and its arguments) run in ``cwd``, of a
    repository whose root is ``root``. Never raises: a file that cannot be read is pinned as such."""
    words = _words(command)
    text = command if isinstance(command, str) else shlex.join(command)
    written = [text, *(env or {}).values(), *(headers or {}).values()]
    pulls = sorted(
        {a or b for value in written for a, b in _VARIABLE.findall(value)} - set(PROJECT_VARIABLES)
    )
    return Pin(
        text,
        tuple(sorted((env or {}).items())),
        tuple(sorted((headers or {}).items())),
        tuple(pulls),
        shown_cwd,
        url,
        _pinned_files(words, root, cwd),
    )


def _words(command: str | Sequence[str]) -> list[str]:
    if not isinstance(command, str):
        return list(command)
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    words: list[str] = []
    writes = False  # the word after > is a file the command writes, not code it runs
    try:
        for word in lexer:
            if set(word) <= _PUNCTUATION:
                writes = ">" in word
            elif writes:
                writes = False
            else:
                words.append(word)
    except ValueError:  # an unbalanced quote: the shell refuses it too; pin what can be read
        return command.split()
    return words


def _pinned_files(words: list[str], root: Path, cwd: Path) -> tuple[PinnedFile, ...]:
    real_root = Path(os.path.realpath(root))
    found: dict[str, PinnedFile] = {}
    for at, word in enumerate(words):
        for candidate in [*_candidates(word, root), *_module_files(words, at)]:
            path = Path(os.path.normpath(cwd / candidate))
            if not path.is_relative_to(root) and not path.is_relative_to(real_root):
                continue
            base = root if path.is_relative_to(root) else real_root
            key = path.relative_to(base).as_posix()
            if key not in found and len(found) < MAX_FILES and _exists(path):
                found[key] = _pin_file(path, key)
    return tuple(found[key] for key in sorted(found))


def _candidates(word: str, root: Path) -> list[str]:
    """The paths a word may name: itself, and after ``--flag=``; the project variables expanded."""
    for name in PROJECT_VARIABLES:
        word = word.replace(f"${{{name}}}", str(root)).replace(f"${name}", str(root))
    if not word or "$" in word or "\0" in word:
        return []
    return [word, word.partition("=")[2]] if word.startswith("-") and "=" in word else [word]


def _module_files(words: list[str], at: int) -> list[str]:
    """The files ``python -m pkg.tool`` (``-mpkg.tool``) runs from the folder it starts in:
    ``pkg/tool.py``, or ``pkg/tool/__main__.py``, and the ``__init__.py`` files on the way."""
    word = words[at]
    if word == "-m" and at + 1 < len(words):
        module = words[at + 1]
    elif word.startswith("-m") and len(word) > 2 and "=" not in word:
        module = word[2:]
    else:
        return []
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*", module):
        return []
    parts = module.split(".")
    folder = "/".join(parts)
    packages = ["/".join(parts[:n]) + "/__init__.py" for n in range(1, len(parts) + 1)]
    return [folder + ".py", folder + "/__main__.py", *packages]


def _exists(path: Path) -> bool:
    try:
        return path.exists() and not path.is_dir()
    except (OSError, ValueError):
        return False


def _pin_file(path: Path, key: str) -> PinnedFile:
    try:
        file = open_regular(path)  # a FIFO or device is never opened: opening some of them acts
    except NotRegularFile:
        return PinnedFile(key, "not-a-file", "not a regular file: not pinned")
    except OSError as exc:
        return PinnedFile(key, "unreadable", f"cannot be read: {exc.strerror or exc}")
    with file:
        status = os.fstat(file.fileno())
        if status.st_size > MAX_FILE_BYTES:
            stand_in = f"size={status.st_size},mtime={status.st_mtime_ns}"
            return PinnedFile(key, stand_in, f"over {MAX_FILE_BYTES >> 20} MiB: pinned by size and time")
        hashed = hashlib.sha256()
        read = 0
        while chunk := file.read(1 << 20):
            hashed.update(chunk)
            read += len(chunk)
            if read > MAX_FILE_BYTES:  # grew while read: what runs is not what was pinned
                return PinnedFile(key, "growing", "changed while it was read")
        return PinnedFile(key, hashed.hexdigest())
