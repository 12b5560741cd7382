"""Finding sessions: the list of a directory, the latest one, one by id prefix.

Listing reads each file once without replaying it: the header gives id, cwd and creation time, the
number of message lines is counted on the raw bytes, and only lines up to the first prompt are parsed.
Files that are not sessions (or whose header was torn by a crash) are left out of lists.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from pathlib import Path

import msgspec

from ink.store.entries import MESSAGE_PREFIX, SessionHeader, decode, ends_complete
from ink.store.errors import AmbiguousSession, NotASession, SessionNotFound
from ink.store.paths import SUFFIX, cwd_folder, id_from_file_name, normalise_cwd

log = logging.getLogger(__name__)

PROMPT_PREVIEW = 200


class SessionInfo(msgspec.Struct, frozen=True):
    id: str
    path: Path
    cwd: str
    model: str
    created: float
    updated: float  # the file's modification time
    first_prompt: str  # "" when the session has no prompt yet
    message_count: int  # message lines written (compacted messages included)


def session_info(path: Path) -> SessionInfo | None:
    """The summary of one session file, or None when it is not a readable session."""
    found = _read_info(path)
    return found if isinstance(found, SessionInfo) else None


def _read_info(path: Path) -> SessionInfo | str:
    """The summary of one session file, or why it is not a readable session."""
    try:
        data = path.read_bytes()
        updated = path.stat().st_mtime
    except OSError as exc:
        return f"cannot read it: {exc.strerror or exc}"
    if not data:
        return "the file is empty"
    complete = data if ends_complete(data) else data[: data.rfind(b"\n") + 1]  # a torn line does not count
    first_line, _, body = complete.partition(b"\n")
    try:
        header = SessionHeader.from_json(decode(first_line))
    except ValueError as exc:
        return f"its first line is not a session header: {exc}"
    count = (b"\n" + body).count(b"\n" + MESSAGE_PREFIX)
    return SessionInfo(
        header.id, path, header.cwd, header.model, header.created, updated, _first_prompt(body), count
    )


def _first_prompt(data: bytes) -> str:
    for line in data.split(b"\n"):
        if not line.startswith(MESSAGE_PREFIX) or b'"role":"user"' not in line:
            continue
        try:
            message = decode(line).get("message") or {}
        except ValueError:
            continue
        if message.get("kind", "prompt") == "prompt":
            text = " ".join(str(message.get("text", "")).split())
            return text[:PROMPT_PREVIEW]
    return ""


def list_sessions(session_dir: Path, cwd: str | os.PathLike[str]) -> list[SessionInfo]:
    """The sessions of ``cwd``, most recently updated first."""
    infos = (session_info(p) for p in _files(cwd_folder(session_dir, cwd)))
    found = [i for i in infos if i is not None]
    return sorted(found, key=lambda i: (i.updated, i.created), reverse=True)


def latest_session(session_dir: Path, cwd: str | os.PathLike[str]) -> SessionInfo | None:
    """The most recently updated session of ``cwd`` (for ``--continue``), or None when it has none.

    Raises ``NotASession`` when the newest file cannot be read as a session: going on with an older one
    instead would resume a conversation the user did not mean, without a word."""
    paths = sorted(_files(cwd_folder(session_dir, cwd)), key=_mtime, reverse=True)
    if not paths:
        return None
    found = _read_info(paths[0])
    if isinstance(found, str):
        raise NotASession(
            paths[0],
            f"{found}; it is the newest session of this folder, so nothing was resumed. Resume another "
            "with `ink --resume ID` (`ink sessions` lists them), or move the file away",
        )
    return found


def resolve_session(session_dir: Path, cwd: str | os.PathLike[str], prefix: str) -> SessionInfo:
    """The session whose id is ``prefix`` or starts with it (``--resume ID``).

    ``cwd``'s sessions are searched first, then every directory's. An exact id wins over prefixes. A path
    to a session file is accepted too. Raises ``SessionNotFound`` or ``AmbiguousSession`` (listing the
    candidates).
    """
    prefix = prefix.strip()
    if not prefix:
        raise SessionNotFound("no session id given")
    as_path = Path(prefix).expanduser()
    if prefix.endswith(SUFFIX) and as_path.is_file():
        info = session_info(as_path)
        if info is None:
            raise SessionNotFound(f"{as_path} is not an ink session file")
        return info
    here = cwd_folder(session_dir, cwd)
    for paths in (_files(here), _all_files(session_dir)):
        match = _match_prefix(paths, prefix)
        if match is not None:
            return match
    raise SessionNotFound(
        f"no session id starts with {prefix!r} (looked in {session_dir}); `ink sessions` lists the "
        f"sessions of {normalise_cwd(cwd)}"
    )


def _match_prefix(paths: Iterable[Path], prefix: str) -> SessionInfo | None:
    matches = {}
    for path in paths:
        session_id = id_from_file_name(path.name)
        if session_id is not None and session_id.startswith(prefix):
            matches[path] = session_id
    exact = [p for p, i in matches.items() if i == prefix]
    chosen = exact or list(matches)
    if not chosen:
        return None
    if len(chosen) > 1:
        raise AmbiguousSession(prefix, sorted(matches[p] for p in chosen))
    info = session_info(chosen[0])
    if info is None:
        raise SessionNotFound(f"{chosen[0]} is not a readable ink session file")
    return info


def _files(folder: Path) -> list[Path]:
    try:
        return [p for p in folder.iterdir() if p.name.endswith(SUFFIX) and p.is_file()]
    except OSError:
        return []


def _all_files(session_dir: Path) -> list[Path]:
    try:
        folders = [p for p in session_dir.iterdir() if p.is_dir()]
    except OSError:
        return []
    return [f for folder in folders for f in _files(folder)]


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
