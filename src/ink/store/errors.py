"""Session store failures.

    SessionError            any problem with a session file or a session lookup
    ├── NotASession         the file is not an ink session (no valid header line)
    ├── CorruptSession      a complete line in the middle of the file is not a valid entry (file:line)
    ├── SessionNotFound     no session matches an id prefix, or none exists for a directory
    ├── SessionInUse        another ink process has the session open for writing
    └── AmbiguousSession    several sessions match an id prefix (``candidates`` lists them)

Messages name the file (and line) and the way out, so the CLI can print them as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


class SessionError(Exception):
    pass


class NotASession(SessionError):
    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: not an ink session file ({reason})")
        self.path = path


class CorruptSession(SessionError):
    def __init__(self, path: Path, line: int, reason: str) -> None:
        super().__init__(
            f"{path}:{line}: damaged session entry ({reason}); the file was left unchanged. "
            "Fix or delete that line to resume this session."
        )
        self.path = path
        self.line = line


class SessionNotFound(SessionError):
    pass


class SessionInUse(SessionError):
    def __init__(self, path: Path) -> None:
        super().__init__(
            f"{path}: this session is open in another ink process; go on there, or start a new session"
        )
        self.path = path


class AmbiguousSession(SessionError):
    def __init__(self, prefix: str, candidates: Sequence[str]) -> None:
        listed = ", ".join(candidates)
        super().__init__(f"session id {prefix!r} is ambiguous; it matches: {listed}. Give more characters.")
        self.prefix = prefix
        self.candidates = tuple(candidates)
