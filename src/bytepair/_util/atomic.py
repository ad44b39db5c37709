"""Whole-or-nothing file writes: an unnamed temporary file in the target's directory, then a rename.

On Linux the new text is written to an ``O_TMPFILE`` file, which has no name
until it is complete: a process killed while writing (even by SIGKILL) leaves
nothing behind. Elsewhere (or on a file system without ``O_TMPFILE``) the
temporary file is named ``.<name>.<random>.tmp`` and removed on any error or
signal that Python sees. ``docs/format.md`` ("Writing") has the details.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO, Iterator

#: Bytes the writability probe reserves in the output directory.
PROBE_BYTES = 1 << 16
#: Errors that mean "this file system has no O_TMPFILE": use a named temporary file.
_NO_TMPFILE = {errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT}
#: Naming an unnamed file needs linkat through /proc (see open(2), O_TMPFILE).
_CAN_NAME_UNNAMED = os.path.isdir("/proc/self/fd")


def resolve_target(path: str | os.PathLike) -> Path:
    """The file a write to ``path`` must replace: a symlink's final target, else ``path``.

    Writing next to the target and renaming over it keeps the link (and any
    other links to that target) pointing at the new content.
    """
    target = Path(path)
    if target.is_symlink():
        return Path(os.path.realpath(target))
    return target


def check_target(path: str | os.PathLike, name: str = "path") -> Path:
    """Check, before any work starts, that ``path`` can be written; ``name`` names it in errors.

    Its directory (a symlink's target's directory) must exist, ``path`` must
    not be a directory, and a probe of :data:`PROBE_BYTES` bytes must fit in
    the directory: this finds a read-only or full file system before training
    rather than at the save. The probe leaves no file. Returns ``path`` as a
    :class:`~pathlib.Path` (not resolved: messages show what the user gave).
    """
    given = Path(path)
    target = resolve_target(given)
    parent = target.parent
    if not parent.is_dir():
        raise FileNotFoundError(f"{name}: directory {str(parent)!r} does not exist")
    if target.is_dir():
        raise IsADirectoryError(f"{name}: {str(given)!r} is a directory")
    if not os.access(parent, os.W_OK):
        raise PermissionError(f"{name}: cannot write in directory {str(parent)!r}")
    try:
        _probe(parent)
    except OSError as exc:
        raise type(exc)(exc.errno, f"{name}: cannot write in directory {str(parent)!r}: "
                                   f"{exc.strerror or exc}") from None
    return given


def _probe(directory: Path) -> None:
    # Reserve real blocks (posix_fallocate), so that a full disk fails here.
    fd, name = _open_temporary(directory, ".bytepair.")
    try:
        try:
            if not hasattr(os, "posix_fallocate"):  # macOS, Windows
                raise OSError(errno.ENOSYS, "no posix_fallocate")
            os.posix_fallocate(fd, 0, PROBE_BYTES)
        except OSError as exc:
            if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
                raise
            os.write(fd, bytes(PROBE_BYTES))
    finally:
        os.close(fd)
        if name is not None:
            os.unlink(name)


def _open_temporary(directory: Path, prefix: str, unnamed: bool = True) -> tuple[int, str | None]:
    """A new private file in ``directory`` open for writing: ``(fd, None)`` when
    unnamed (``O_TMPFILE``), else ``(fd, its name)``, ``<prefix><random>.tmp``."""
    flag = getattr(os, "O_TMPFILE", None)
    if flag is not None and unnamed:
        try:
            return os.open(directory, flag | os.O_WRONLY | getattr(os, "O_CLOEXEC", 0), 0o600), None
        except OSError as exc:
            if exc.errno not in _NO_TMPFILE:
                raise
    import tempfile  # here: it imports shutil and random, slow at start-up

    fd, name = tempfile.mkstemp(dir=directory, prefix=prefix, suffix=".tmp")
    return fd, name


def _mode_for(target: Path) -> int:
    """An existing file's permission bits, else the usual umask-based mode of a new file."""
    try:
        info = os.stat(target)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
    return stat.S_IMODE(info.st_mode)


@contextlib.contextmanager
def open_atomically(path: str | os.PathLike) -> Iterator[BinaryIO]:
    """A binary file handle whose content replaces ``path`` when the block ends without error.

    Either the whole file appears or nothing does (an error or interruption
    inside the block leaves no file); an existing file is replaced only once
    the new one is complete, and keeps its permission bits. A symlink at
    ``path`` is kept: its target is replaced.
    """
    check_target(path)
    target = resolve_target(path)
    parent = target.parent
    mode = _mode_for(target)
    directory = os.open(parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    temporary = None
    try:
        fd, named = _open_temporary(parent, f".{target.name}.", unnamed=_CAN_NAME_UNNAMED)
        temporary = named
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
            if named is None:
                # Give the complete file a name; link(2) cannot replace, so
                # link a fresh name, then rename it over the target. A
                # dst_dir_fd makes os.link call linkat, which follows the
                # /proc link to the open file (AT_SYMLINK_FOLLOW).
                import secrets  # here: it imports hashlib and random, slow at startup

                name = f".{target.name}.{secrets.token_hex(6)}.tmp"
                temporary = str(parent / name)
                os.link(f"/proc/self/fd/{handle.fileno()}", name, dst_dir_fd=directory,
                        follow_symlinks=True)
        os.replace(temporary, target)
        temporary = None
        os.fsync(directory)
    except BaseException:
        if temporary is not None:
            try:
                os.unlink(temporary)
            except FileNotFoundError:
                pass
        raise
    finally:
        os.close(directory)


def write_atomically(path: str | os.PathLike, text: str | bytes) -> None:
    """Write ``text`` (encoded as UTF-8) or bytes to ``path`` through :func:`open_atomically`.

    O(len(text)).
    """
    with open_atomically(path) as handle:
        handle.write(text.encode("utf-8") if isinstance(text, str) else text)
