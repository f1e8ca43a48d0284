"""Writing a file atomically: into a temporary file beside it, renamed over it only once complete, so a reader
(or a crash) never sees half a file and a failed write leaves the old file as it was."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

__all__ = ["atomic_path", "atomic_write", "default_permissions"]


def default_permissions() -> int:
    """The mode ``open()`` gives a new file, 0o666 less the process umask (a temporary file starts at 0o600)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


@contextmanager
def atomic_path(path: str | os.PathLike[str], *, parents: bool = False,
                permissions: int | None = None) -> Iterator[Path]:
    """Yield the path of an empty temporary file (``<name>.XXXX.tmp`` in ``path``'s folder) for the caller to
    write, then rename it onto ``path``; on any error remove it and re-raise.

    ``parents`` creates the folder first; ``permissions`` sets the file's mode (``None`` keeps the temporary
    file's owner-only 0o600).
    """
    target = Path(path)
    if parents:
        target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=target.name + ".", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        if permissions is not None:
            os.chmod(tmp, permissions)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@contextmanager
def atomic_write(path: str | os.PathLike[str], mode: str = "wb", *, encoding: str | None = None,
                 parents: bool = False, permissions: int | None = None, fsync: bool = False) -> Iterator[IO[Any]]:
    """Yield a file opened with ``mode`` ("wb" or "w") on a temporary file that replaces ``path`` when the block
    ends without an error (see ``atomic_path``); ``fsync`` flushes it to the disk before the rename."""
    with atomic_path(path, parents=parents, permissions=permissions) as tmp, open(tmp, mode, encoding=encoding) as fh:
        yield fh
        if fsync:
            fh.flush()
            os.fsync(fh.fileno())
