"""What the user approved, by digest: ``$INK_HOME/trusted-*.json`` maps a file's path to the SHA-256 of
the content the user (or ink itself) vouched for. Content that came with a repository, or changed since,
has another digest and is not trusted. The remembered permissions (``.ink/permissions.toml``) and the
project's hooks (docs/hooks.md) are both kept this way. Writes are atomic and private.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ink.store.paths import PRIVATE_FILE, make_private_dirs


class TrustRecord:
    def __init__(self, path: Path) -> None:
        self.path = path

    def trusts(self, key: str, data: bytes) -> bool:
        return self._read().get(key) == digest(data)

    def trust(self, key: str, data: bytes) -> None:
        """Raises ``OSError`` when the record cannot be written."""
        record = self._read() | {key: digest(data)}
        make_private_dirs(self.path.parent)
        text = json.dumps(record, indent=1, sort_keys=True) + "\n"
        write_atomically(self.path, text.encode("utf-8"), mode=PRIVATE_FILE)

    def _read(self) -> dict[str, object]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            return {}
        return data if isinstance(data, dict) else {}


def digest(data: bytes) -> str:
    import hashlib  # here, not at the top: ink's start-up does not need it

    return hashlib.sha256(data).hexdigest()


def write_atomically(path: Path, data: bytes, *, mode: int) -> None:
    """A temporary file in the same directory, synced, then renamed over ``path``. Raises ``OSError``."""
    import tempfile

    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
