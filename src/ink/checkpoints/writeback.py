"""Files written back into the workspace, and removed from it, without ever leaving it.

A restore runs while anything else may change the workspace: a folder can be swapped for a symlink to
outside it between two steps. So no path is ever resolved by name from the root: each one is reached
from a descriptor of the workspace, a folder at a time, each folder opened ``O_NOFOLLOW | O_DIRECTORY``
(a symlink or a file where a folder should be stops the walk: that path is *blocked*, nothing is done
to it), and the last step is a call relative to the folder's descriptor that never follows a symlink
either (``unlinkat``, ``rmdir``, ``renameat``, ``symlinkat``, ``linkat``). A folder moved away while
it is open is the one exception no descriptor can see: what was written goes with it.

A file is written whole under a temporary name in its own folder (``TEMP_PREFIX``), then renamed over
its name: a kill at any moment leaves either the old file or the new one, never a torn one; the
temporary file it may leave is removed by the next snapshot of the session (``ink.checkpoints.restore``).
A file that did not exist when the restore began is put in place with ``linkat``, which refuses to
replace anything: a file someone made there meanwhile is kept (blocked), not overwritten.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat

TEMP_PREFIX = ".ink-restore-"
REGULAR, EXECUTABLE, SYMLINK = 0o100644, 0o100755, 0o120000
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class Blocked(Exception):
    """Something other than a folder stands where the path needs one, or a folder where it needs a file,
    or a file appeared where none was: the path is left as it is."""


class WorkspaceTree:
    """The workspace, reached through a descriptor of its root (opened once: the root itself is trusted,
    as it is when ink starts in it). Paths are git's: relative, ``/``-separated, as ``str`` from
    ``surrogateescape`` decoding."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self._root = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)

    def close(self) -> None:
        os.close(self._root)

    def __enter__(self) -> WorkspaceTree:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def remove(self, rel: str) -> bool:
        """Remove the file or symlink at ``rel``, then the folders above it left empty. False when it is
        not there (gone already, or one of its folders). Raises ``Blocked`` (nothing changed): a symlink
        or a file where a folder of its path should be, a folder in its place, no permission."""
        *folders, name = _parts(rel)
        try:
            chain = self._walk(folders, make=False)
        except FileNotFoundError:
            return False
        try:
            try:
                os.unlink(name, dir_fd=chain[-1])
            except FileNotFoundError:
                return False
            except OSError as exc:  # EISDIR (a folder), EACCES or EPERM
                raise Blocked(rel) from exc
            for depth in range(len(folders), 0, -1):  # each folder, deepest first, while empty
                try:
                    os.rmdir(folders[depth - 1], dir_fd=chain[depth - 1])
                except OSError:
                    break  # not empty (or no longer a folder: rmdir never follows a symlink)
            return True
        finally:
            _close(chain)

    def write(self, rel: str, data: bytes, mode: int, temp: str, *, replace: bool) -> None:
        """Make ``rel`` hold ``data`` (``mode``: git's, regular, executable or symlink), making its folders.
        ``temp``: the temporary name in its folder. ``replace``: a file or symlink there is replaced;
        otherwise the path must be free. Raises ``Blocked`` (nothing changed), ``OSError`` (a full
        disk: the restore cannot go on)."""
        *folders, name = _parts(rel)
        try:
            chain = self._walk(folders, make=True)
        except PermissionError as exc:  # a folder that may not be entered or written
            raise Blocked(rel) from exc
        folder = chain[-1]
        try:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp, dir_fd=folder)  # a leftover of a killed restore, under our own name
            if mode == SYMLINK:
                os.symlink(data, temp, dir_fd=folder)
            else:
                self._write_file(folder, name, temp, data, mode == EXECUTABLE)
            try:
                self._put(folder, temp, name, replace=replace)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temp, dir_fd=folder)
                raise
        except (FileNotFoundError, PermissionError) as exc:  # the folder was removed while open (replaced
            raise Blocked(rel) from exc  # by another), or may not be written
        finally:
            _close(chain)

    def drop(self, rel: str, temp: str) -> None:
        """Remove the temporary file ``temp`` of ``rel``'s folder, if it is there (after a kill)."""
        try:
            *folders, _name = _parts(rel)
            chain = self._walk(folders, make=False)
        except (Blocked, OSError):
            return
        try:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=chain[-1])
        finally:
            _close(chain)

    # -- mechanism ----------------------------------------------------------------------------------

    def _walk(self, folders: list[bytes], *, make: bool) -> list[int]:
        """Descriptors of the root and of each folder of ``folders`` in turn (the caller closes them)."""
        chain = [os.dup(self._root)]
        try:
            for name in folders:
                chain.append(_open_folder(chain[-1], name, make=make))
        except BaseException:
            _close(chain)
            raise
        return chain

    @staticmethod
    def _write_file(folder: int, name: bytes, temp: str, data: bytes, executable: bool) -> None:
        """``data`` under ``temp``. The permission bits of the file it replaces are kept (a private file
        stays private), its executable bits set as the checkpoint has them; a new file gets the usual
        bits less the umask, as any program's would."""
        fd = os.open(temp, _NEW, 0o777 if executable else 0o666, dir_fd=folder)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            with contextlib.suppress(FileNotFoundError, NotADirectoryError):
                old = os.stat(name, dir_fd=folder, follow_symlinks=False)
                if stat.S_ISREG(old.st_mode):
                    bits = stat.S_IMODE(old.st_mode) & 0o777
                    bits = bits | (bits & 0o444) >> 2 if executable else bits & ~0o111
                    os.fchmod(fd, bits)
        finally:
            os.close(fd)

    @staticmethod
    def _put(folder: int, temp: str, name: bytes, *, replace: bool) -> None:
        if replace:
            try:
                os.rename(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
            except (IsADirectoryError, NotADirectoryError) as exc:
                raise Blocked(name) from exc  # a folder stands there now
            except OSError as exc:
                if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
                    raise Blocked(name) from exc
                raise
            return
        try:  # linkat never replaces: a file made there meanwhile is someone's, and stays
            os.link(temp, name, src_dir_fd=folder, dst_dir_fd=folder, follow_symlinks=False)
        except FileExistsError as exc:
            raise Blocked(name) from exc
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EMLINK, errno.EXDEV):
                raise
            _put_unlinked(folder, temp, name)  # a file system without hard links
            return
        os.unlink(temp, dir_fd=folder)


def _put_unlinked(folder: int, temp: str, name: bytes) -> None:
    try:
        os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        os.rename(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
        return
    raise Blocked(name)


def _open_folder(parent: int, name: bytes, *, make: bool) -> int:
    for _attempt in range(2):
        try:
            return os.open(name, _DIR, dir_fd=parent)
        except FileNotFoundError:
            if not make:
                raise
            with contextlib.suppress(FileExistsError):  # made meanwhile: opened (or refused) next
                os.mkdir(name, 0o777, dir_fd=parent)
        except OSError as exc:  # ELOOP: a symlink; ENOTDIR: a file
            raise Blocked(name) from exc
    raise Blocked(name)


def _parts(rel: str) -> list[bytes]:
    parts = os.fsencode(rel).split(b"/")
    if not rel or any(p in (b"", b".", b"..") for p in parts):
        raise Blocked(rel)  # git never names such a path; never trust more than that
    return parts


def _close(fds: list[int]) -> None:
    for fd in fds:
        os.close(fd)
