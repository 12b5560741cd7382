"""File helpers for read, write and edit: text decoding that can be reversed, and atomic replacement.

Decoding remembers what it found (encoding, byte-order mark, line endings) so that edit writes the file
back the way it came: CRLF stays CRLF, a BOM stays, latin-1 stays latin-1.
"""

from __future__ import annotations

import codecs
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

SAMPLE_BYTES = 8192
_CONTROL = frozenset(range(0x00, 0x09)) | frozenset(range(0x0E, 0x20)) | {0x7F}


class BinaryFile(ValueError):
    """The bytes are not text ink can show or edit; the message says why."""


def sniff_encoding(sample: bytes) -> str:
    """The encoding of a file whose first bytes are ``sample``: "utf-8-sig", "utf-8" or "latin-1".

    Raises ``BinaryFile`` for NUL bytes (or a UTF-16 byte-order mark) and for bytes that are neither UTF-8
    nor plausibly latin-1 text (many control characters). A multi-byte character cut at the end of the
    sample does not count against UTF-8.
    """
    if sample.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise BinaryFile("it is UTF-16 text, which this tool does not handle (convert it to UTF-8 first)")
    nul = sample.find(b"\0")
    if nul >= 0:
        raise BinaryFile(f"it looks binary (NUL byte at offset {nul})")
    if sample.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    try:
        codecs.getincrementaldecoder("utf-8")().decode(sample, final=False)
        return "utf-8"
    except UnicodeDecodeError:
        pass
    controls = sum(1 for byte in sample if byte in _CONTROL)
    if controls > len(sample) // 100:
        raise BinaryFile("it looks binary (not UTF-8, and full of control bytes)")
    return "latin-1"


@dataclass(frozen=True, slots=True)
class TextContent:
    """A decoded file. ``text`` has its line endings normalised to ``\\n`` when ``crlf`` is set."""

    text: str
    encoding: str
    crlf: bool

    def encode(self, text: str) -> bytes:
        """``text`` (normalised like ``self.text``) as bytes in this file's encoding and line endings.

        Raises ``UnicodeEncodeError`` when the encoding (latin-1) cannot represent a character.
        """
        if self.crlf:
            text = text.replace("\n", "\r\n")
        return text.encode(self.encoding)


def decode_text(data: bytes) -> TextContent:
    """Decode a whole file. ``crlf`` is set only when every line ending is CRLF (a mixed file stays raw).

    Raises ``BinaryFile`` (see ``sniff_encoding``); a file that is UTF-8 at its start but not further on is
    decoded as latin-1, which maps every byte and so round-trips exactly.
    """
    encoding = sniff_encoding(data[:SAMPLE_BYTES])
    nul = data.find(b"\0")
    if nul >= 0:
        raise BinaryFile(f"it looks binary (NUL byte at offset {nul})")
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError:
        encoding, text = "latin-1", data.decode("latin-1")
    crlf_count = text.count("\r\n")
    crlf = crlf_count > 0 and crlf_count == text.count("\n")
    return TextContent(text.replace("\r\n", "\n") if crlf else text, encoding, crlf)


def _read_umask() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    current = os.umask(0o022)  # no way to read it without setting it elsewhere
    os.umask(current)
    return current


def atomic_write(path: Path, data: bytes) -> bool:
    """Replace ``path`` with ``data`` atomically; returns True when the file was created.

    Parent folders are created. The bytes go to a temporary file in the same folder, are flushed to disk,
    and are renamed over ``path``: a reader sees the old or the new file, never a torn one, and a failure
    leaves the old file untouched (the temporary file is removed). An existing file keeps its mode (and its
    owner when ink may set it); a new one gets the mode a plain ``open`` would give. ``path`` must not be a
    symlink (resolve it first). Raises ``OSError`` on failure.

    When the folder refuses new files but the existing file may be written (a file ink may change in a
    folder it may not), the file is rewritten in place instead: not atomic, but the user's permissions
    say that is the only way.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        old = os.stat(path)
    except FileNotFoundError:
        old = None
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".ink-tmp")
    except PermissionError:
        if old is None or not os.access(path, os.W_OK):
            raise
        _rewrite_in_place(path, data)
        return False
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, stat.S_IMODE(old.st_mode) if old else 0o666 & ~_read_umask())
        if old is not None and (old.st_uid, old.st_gid) != (os.geteuid(), os.getegid()):
            try:
                os.chown(tmp, old.st_uid, old.st_gid)
            except OSError:
                pass  # only the owner's group or root may do this; the content matters more
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return old is None


def _rewrite_in_place(path: Path, data: bytes) -> None:
    with open(path, "r+b") as out:
        out.write(data)
        out.truncate()
        out.flush()
        os.fsync(out.fileno())


def describe_os_error(exc: OSError, shown: str) -> str:
    """A one-line message for the usual file errors, naming the path as the model gave it."""
    if isinstance(exc, FileNotFoundError):
        return f"File not found: {shown}"
    if isinstance(exc, PermissionError):
        return f"Permission denied: {shown}"
    if isinstance(exc, IsADirectoryError):
        return f"{shown} is a directory"
    if isinstance(exc, NotADirectoryError):
        return f"A parent of {shown} is not a directory"
    return f"Cannot access {shown}: {exc.strerror or exc}"
