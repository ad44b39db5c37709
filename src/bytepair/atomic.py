"""Whole-or-nothing file writes: a temporary file in the target's directory, then a rename."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def check_target(path: str | os.PathLike, name: str = "path") -> Path:
    """Check, before any work starts, that ``path`` can be written; ``name`` names it in errors.

    Its directory must exist and be writable, and ``path`` must not be a directory.
    """
    target = Path(path)
    parent = target.parent
    if not parent.is_dir():
        raise FileNotFoundError(f"{name}: directory {str(parent)!r} does not exist")
    if target.is_dir():
        raise IsADirectoryError(f"{name}: {str(target)!r} is a directory")
    if not os.access(parent, os.W_OK):
        raise PermissionError(f"{name}: cannot write in directory {str(parent)!r}")
    return target


def write_atomically(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename.

    Either the whole file appears or nothing does; an existing file is
    replaced only once the new one is complete.
    """
    target = check_target(path)
    parent = target.parent
    fd, tmp = tempfile.mkstemp(dir=parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        # mkstemp makes the file private; give it the usual umask-based mode.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
        directory = os.open(parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
