"""Where session files live: ``<session_dir>/<cwd folder>/<created>_<id>.jsonl``.

Sessions are grouped by working directory, one folder per directory, named by a readable slug of the
path plus a short hash of it (two paths with the same slug still get different folders). File names start
with the creation time, so a folder listing is also a chronological one.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

SLUG_MAX = 60
SUFFIX = ".jsonl"
PRIVATE_DIR = 0o700  # $INK_HOME, sessions/ and below: transcripts are nobody else's business
PRIVATE_FILE = 0o600


def ink_home() -> Path:
    """``$INK_HOME``, default ``~/.ink``."""
    value = os.environ.get("INK_HOME")
    return Path(value).expanduser() if value else Path.home() / ".ink"


def default_session_dir() -> Path:
    return ink_home() / "sessions"


def make_private_dirs(path: Path) -> None:
    """Create ``path`` and every missing parent with mode 0700 (``mkdir(parents=True, mode=...)`` gives
    the mode to the last one only; the parents get the umask's 0755). Folders that exist are left as the
    user made them. Raises ``OSError``."""
    missing: list[Path] = []
    current = path
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=PRIVATE_DIR)
        except FileExistsError:  # created meanwhile by another ink process
            continue
        os.chmod(folder, PRIVATE_DIR)  # mkdir's mode is filtered by the umask; 0700 is meant exactly


def normalise_cwd(cwd: str | os.PathLike[str]) -> str:
    return str(Path(cwd).expanduser().resolve())


def cwd_folder(session_dir: Path, cwd: str | os.PathLike[str]) -> Path:
    """The folder holding the sessions of ``cwd`` (not created here)."""
    path = normalise_cwd(cwd)
    slug = re.sub(r"[^A-Za-z0-9._]+", "-", path).strip("-.") or "root"
    if len(slug) > SLUG_MAX:
        slug = slug[-SLUG_MAX:].lstrip("-.")  # the tail names the project; the hash keeps it unique
    import hashlib  # here, not at the top: a run without a session never needs it (~1 ms to import)

    digest = hashlib.sha256(path.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return session_dir / f"{slug}-{digest}"


def session_file_name(session_id: str, created: float) -> str:
    stamp = time.strftime("%Y-%m-%dT%H-%M-%S", time.gmtime(created))
    return f"{stamp}_{session_id}{SUFFIX}"


def id_from_file_name(name: str) -> str | None:
    """The session id in a file name made by ``session_file_name``, else None."""
    if not name.endswith(SUFFIX) or "_" not in name:
        return None
    return name[: -len(SUFFIX)].split("_", 1)[1] or None
