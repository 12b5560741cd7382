"""File helpers for read, write and edit: text decoding that can be reversed, and atomic replacement
through a folder held open.

Decoding remembers what it found (encoding, byte-order mark, line endings) so that edit writes the file
back the way it came: CRLF stays CRLF, a BOM stays, latin-1 stays latin-1.

Writing opens the path once (``pin``): the folders are walked by descriptor from the workspace root with
``O_NOFOLLOW``, symlinks are followed by reading them (and, for a path named inside the workspace, only
while they stay inside it), and the file is then read and replaced through the held folder. Nothing is
looked up by name again, so a folder swapped for a symlink after the permission check cannot redirect the
write (docs/security.md).
"""

from __future__ import annotations

import codecs
import os
import stat
from pathlib import Path

import msgspec

from ink.regular_file import read_regular

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


class TextContent(msgspec.Struct, frozen=True):
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


# -- opening the checked path once -----------------------------------------------------------------

MAX_PINNED_READ = 64 << 20  # a file edit reads whole (text, then its edited copy, then the bytes)
MAX_SYMLINKS = 40  # as the kernel: more links on one path is a loop
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class EscapedWorkspace(OSError):
    """A symlink on the way to a file named inside the workspace leads out of it."""


class PinnedFile(msgspec.Struct):
    """The folder of a file to write, held open, and the file's name in it: the file is reached through
    ``folder`` (a descriptor), so swapping a folder on its path for a symlink after ``pin`` changes nothing.
    ``path``: where it is, for messages and diffs. Close it (or use ``with``)."""

    folder: int
    name: str
    path: Path

    def __enter__(self) -> PinnedFile:
        return self

    def __exit__(self, *_exc: object) -> None:
        os.close(self.folder)

    def stat(self) -> os.stat_result | None:
        """The file's status (not following a symlink), None when it does not exist."""
        try:
            return os.stat(self.name, dir_fd=self.folder, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def read_bytes(self, limit: int = MAX_PINNED_READ) -> bytes:
        """The file's bytes; a FIFO or a device is refused without being opened (``NotRegularFile``), a
        file over ``limit`` without being read (``FileTooLarge``)."""
        return read_regular(self.name, limit, follow_symlinks=False, dir_fd=self.folder).data


def pin(root: Path, given: str, *, create_folders: bool = False) -> PinnedFile:
    """Open the folder of the file ``given`` names, walking from the workspace ``root`` (or from ``/`` for
    a path named outside it) one folder at a time by descriptor with ``O_NOFOLLOW``. Symlinks met on the
    way, the file's own included, are followed by reading them; for a path named inside the workspace
    they must stay inside it (``EscapedWorkspace`` otherwise): a folder of the project swapped for a link
    to elsewhere between the permission check and the write cannot carry the write out.
    ``create_folders``: make missing folders (mode 0777 less the umask). Raises ``OSError``."""
    expanded = os.path.expanduser(given) if given.startswith("~") else given
    lexical = Path(os.path.normpath(os.path.join(root, expanded)))
    inside = lexical == root or lexical.is_relative_to(root)
    base = root if inside else Path("/")
    parts = list(lexical.relative_to(base).parts)
    if not parts:
        raise IsADirectoryError(21, "Is a directory", str(lexical))
    walk = _Walk(base, inside, create_folders)
    try:
        return walk.run(parts)
    except BaseException:
        walk.close()
        raise


class _Walk:
    def __init__(self, base: Path, confined: bool, create: bool) -> None:
        self.base = base
        self.bases = (base, Path(os.path.realpath(base)))  # a link may name the workspace by either
        self.confined = confined
        self.create = create
        self.links = 0
        self.stack = [os.open(base, _DIR_FLAGS & ~os.O_NOFOLLOW)]  # the root itself may be a link
        self.names: list[str] = []

    def run(self, parts: list[str]) -> PinnedFile:
        while parts:
            name = parts.pop(0)
            if name in ("", "."):
                continue
            if name == "..":
                self.up()
                continue
            if not parts and not self.is_link(name):
                folder = self.stack.pop()
                self.close()
                return PinnedFile(folder, name, self.base.joinpath(*self.names, name))
            if self.is_link(name):
                parts[:0] = self.follow(name)
                continue
            self.down(name)
        raise IsADirectoryError(21, "Is a directory", str(self.base.joinpath(*self.names)))

    def is_link(self, name: str) -> bool:
        try:
            return stat.S_ISLNK(os.stat(name, dir_fd=self.stack[-1], follow_symlinks=False).st_mode)
        except FileNotFoundError:
            return False

    def follow(self, name: str) -> list[str]:
        self.links += 1
        if self.links > MAX_SYMLINKS:
            raise OSError(40, "Too many levels of symbolic links", name)
        target = os.readlink(name, dir_fd=self.stack[-1])
        if not target.startswith("/"):
            return target.split("/")
        absolute = Path(os.path.normpath(target))
        base = next((b for b in self.bases if absolute.is_relative_to(b)), None)
        if self.confined and base is None:
            raise EscapedWorkspace(1, f"a symlink leads out of the workspace (to {target})", name)
        while len(self.stack) > 1:
            self.up()
        return list(absolute.relative_to(base).parts) if self.confined and base else list(absolute.parts[1:])

    def down(self, name: str) -> None:
        try:
            fd = os.open(name, _DIR_FLAGS, dir_fd=self.stack[-1])
        except FileNotFoundError:
            if not self.create:
                raise
            try:
                os.mkdir(name, 0o777, dir_fd=self.stack[-1])
            except FileExistsError:
                pass  # made meanwhile: opened below, still without following a link
            fd = os.open(name, _DIR_FLAGS, dir_fd=self.stack[-1])
        self.stack.append(fd)
        self.names.append(name)

    def up(self) -> None:
        if len(self.stack) == 1:
            if self.confined:
                raise EscapedWorkspace(1, "a symlink leads out of the workspace (above it)", "..")
            return  # /.. is /
        os.close(self.stack.pop())
        self.names.pop()

    def close(self) -> None:
        for fd in self.stack:
            os.close(fd)
        self.stack.clear()


def write_pinned(target: PinnedFile, data: bytes) -> bool:
    """Replace the file of ``target`` with ``data`` atomically, through its held folder; returns True when
    the file was created. Keeps an existing file's mode (and owner, when ink may set it); a new file gets
    the mode a plain ``open`` would give. When the folder refuses new files but the file may be written,
    it is rewritten in place (not atomic: the user's permissions leave no other way). Raises ``OSError``."""
    old = target.stat()
    if old is not None and stat.S_ISDIR(old.st_mode):
        raise IsADirectoryError(21, "Is a directory", str(target.path))
    try:
        fd, temporary = _temporary(target)
    except PermissionError:
        if old is None:
            raise
        _rewrite_in_place(target, data)
        return False
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fchmod(out.fileno(), stat.S_IMODE(old.st_mode) if old else 0o666 & ~_read_umask())
            if old is not None and (old.st_uid, old.st_gid) != (os.geteuid(), os.getegid()):
                try:
                    os.fchown(out.fileno(), old.st_uid, old.st_gid)
                except OSError:
                    pass  # only the owner's group or root may do this; the content matters more
            os.fsync(out.fileno())
        os.replace(temporary, target.name, src_dir_fd=target.folder, dst_dir_fd=target.folder)
    except BaseException:
        try:
            os.unlink(temporary, dir_fd=target.folder)
        except OSError:
            pass
        raise
    return old is None


def _temporary(target: PinnedFile) -> tuple[int, str]:
    import secrets

    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        name = f".{target.name[:200]}.{secrets.token_hex(4)}.ink-tmp"
        try:
            return os.open(name, flags, 0o600, dir_fd=target.folder), name
        except FileExistsError:
            continue
    raise FileExistsError(17, "No free temporary file name", str(target.path))


def _rewrite_in_place(target: PinnedFile, data: bytes) -> None:
    fd = os.open(target.name, os.O_WRONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), dir_fd=target.folder)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
        out.truncate()
        out.flush()
        os.fsync(out.fileno())


def describe_os_error(exc: OSError, shown: str, action: str = "access") -> str:
    """A one-line message for the usual file errors, naming the path as the model gave it (once)."""
    if isinstance(exc, EscapedWorkspace):
        return (
            f"{shown} leads out of the workspace through a symlink ({exc.strerror}), which write and edit "
            "do not follow; name the real path if that file is meant"
        )
    if exc.errno == 40:  # ELOOP: a link where a folder was (swapped while ink was writing), or a loop
        return f"{shown}: a symlink is in the way or loops ({exc.strerror}); nothing was written"
    if action != "access":  # "Cannot write X: Permission denied": the path named once
        reason = "Permission denied" if isinstance(exc, PermissionError) else exc.strerror
        return f"Cannot {action} {shown}: {reason or type(exc).__name__}"
    if isinstance(exc, FileNotFoundError):
        return f"File not found: {shown}"
    if isinstance(exc, PermissionError):
        return f"Permission denied: {shown}"
    if isinstance(exc, IsADirectoryError):
        return f"{shown} is a directory"
    if isinstance(exc, NotADirectoryError):
        return f"A parent of {shown} is not a directory"
    return f"Cannot {action} {shown}: {exc.strerror or exc}"
