"""Finding the project's ``.ink/config.toml``, and deciding whether it may be read at all.

A project file changes the model, ``max_tokens``, thinking and deny rules of every run below it, so two
things are refused (docs/security.md, "Hostile repositories and shared machines"):

- **Files above the project.** The search goes from the working directory upwards and stops at the
  repository root (the first directory holding ``.git``) or at the home directory, whichever comes first:
  a ``/tmp/.ink/config.toml`` or ``/home/.ink/config.toml`` never applies to a project below it. Outside
  any repository and any home directory the search goes on to ``/``, where the ownership rule still holds.
- **Files another user controls.** A file owned by another user (root excepted, as for ssh) or writable
  by its group or by everyone is ignored with a warning: on a shared machine anybody could have written
  it. The check is made on the very file that was read (``fstat`` of the open descriptor).

The user's own ``.ink`` (``$INK_HOME`` or ``~/.ink``) is never a project file.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from ink.config.files import ConfigFile, parse_config, read_config_bytes


def find_project_file(cwd: Path, ink_home: Path, env: Mapping[str, str]) -> Path | None:
    """The nearest ``.ink/config.toml`` from ``cwd`` up to the repository root or the home directory
    (see the module doc), never the user's own ``.ink``."""
    return find_in_project(cwd, ink_home, env, "config.toml", Path.is_file)


def find_in_project(
    cwd: Path,
    ink_home: Path,
    env: Mapping[str, str],
    name: str,
    exists: Callable[[Path], bool],
    *,
    folder: str = ".ink",
) -> Path | None:
    """The nearest ``FOLDER/NAME`` (``.ink/commands``; ``.claude/agents``; with ``folder=""`` a file of
    the project's own folder, ``.mcp.json``) for which ``exists`` holds, searched like
    ``find_project_file``, never in the user's own ``~/.ink``, ``$INK_HOME`` or ``~/.claude``."""
    home = _home(env)
    personal = {ink_home.resolve()} if folder == ".ink" else set()
    personal |= {(home / folder).resolve()} if home and folder else set()
    for directory in _search_path(cwd, home):
        holder = directory / folder if folder else directory
        candidate = holder / name if name else holder
        if exists(candidate) and holder.resolve() not in personal:
            return candidate
    return None


def read_project_file(path: Path, warnings: list[str]) -> ConfigFile | None:
    """The checked project file at ``path``, or None when it is missing or not trusted (a warning says
    why). Raises ``ConfigError`` for a trusted file that is malformed."""
    read = read_config_bytes(path)
    if read is None:
        return None
    raw, status = read
    problem = untrusted_because(status)
    if problem is not None:
        warnings.append(
            f"{path}: ignoring this project config: {problem}; anybody who can change it would choose "
            "settings for your runs (fix its owner or mode if it is yours)"
        )
        return None
    return parse_config(path, raw)


def untrusted_file(status: os.stat_result | None, path: Path, what: str) -> str | None:
    """The warning for a project file (a custom command, an agent type) another user may have written,
    or None: the rule ``read_project_file`` applies to the config file, applied to every file of a
    project's ``.ink``, in a parent folder too (an ``.ink/commands`` owned by another user)."""
    problem = untrusted_because(status) if status is not None else None
    if problem is None:
        return None
    return f"{path}: ignoring this {what}: {problem}; anybody who can change it would choose what it does"


def untrusted_because(status: os.stat_result, uid: int | None = None) -> str | None:
    """Why a file with ``status`` may have been written by somebody else, or None when only its owner
    (this user, or root) can have written it."""
    me = os.geteuid() if uid is None else uid
    if status.st_uid not in (me, 0):
        return f"it is owned by another user (uid {status.st_uid})"
    if status.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        who = "everyone" if status.st_mode & stat.S_IWOTH else "its group"
        return f"it is writable by {who} (mode {stat.S_IMODE(status.st_mode):04o})"
    return None


def _search_path(cwd: Path, home: Path | None) -> Iterator[Path]:
    """``cwd`` and its parents, up to and including the repository root, or up to (not including) the
    home directory, whose ``.ink`` is the user's own."""
    for directory in (cwd, *cwd.parents):
        if home is not None and directory == home:
            return
        yield directory
        if (directory / ".git").exists():
            return


def _home(env: Mapping[str, str]) -> Path | None:
    raw = env.get("HOME", "").strip()
    if not raw:
        return None
    try:
        return Path(raw).resolve()
    except (OSError, RuntimeError):
        return None
