"""Where numba caches bgnet's compiled kernels: a folder per version of the kernels' sources.

numba checks a cached kernel against its own source file only. A kernel that calls
another module's kernel (the rollout's luck calls the move generator, the net's kernel
calls the feature encoders) keeps the compiled code of the callee it was built with
after that callee's file changes: an upgrade or an edit can leave it running old rules
or old speed without a sign (one such stale kernel once ran 2.8 times faster than a fresh
compile of the same sources, and benchmarks measured it). So every kernel is cached under a
folder named by a digest of all the package's files that define kernels: any change to
one of them starts a fresh cache, compiled once.

The folder is ``$NUMBA_CACHE_DIR/<digest>`` when that is set, else ``__pycache__/kernels/<digest>``
inside the package when it is writable (older digests there are removed), else
``$XDG_CACHE_HOME/bgnet-kernels/<digest>`` (``~/.cache``). numba adds each source folder below it.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from pathlib import Path

__all__ = ["KERNEL_MARK", "kernel_cache_dir", "kernel_files", "kernel_sources_digest", "use_kernel_cache"]

PACKAGE_DIR = Path(__file__).resolve().parents[1]
"""The ``bgnet`` package folder."""
KERNEL_MARK = re.compile(rb"^[ \t]*@(?:numba\.)?n?jit\b", re.MULTILINE)
"""A source file with a line like this (``@njit(...)``, ``@numba.njit``, ``@jit``) defines numba kernels."""


def kernel_files(package: Path = PACKAGE_DIR) -> dict[Path, bytes]:
    """Every ``.py`` file under ``package`` that defines kernels, with its text, in path order."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        try:
            text = path.read_bytes()
        except OSError:
            continue
        if KERNEL_MARK.search(text):
            found[path] = text
    return found


def kernel_sources_digest(package: Path = PACKAGE_DIR) -> str:
    """16 hex digits of the SHA-256 of every file of ``kernel_files`` (its path in the package and its text)."""
    digest = hashlib.sha256()
    for path, text in kernel_files(package).items():
        digest.update(path.relative_to(package).as_posix().encode() + b"\0" + text + b"\0")
    return digest.hexdigest()[:16]


def _writable(folder: Path) -> bool:
    """Whether files can be made in ``folder`` (created if missing)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(folder, os.W_OK)


def kernel_cache_dir(package: Path = PACKAGE_DIR) -> Path:
    """The folder numba caches this version's kernels in (see the module's docstring)."""
    digest = kernel_sources_digest(package)
    if os.environ.get("NUMBA_CACHE_DIR"):
        return Path(os.environ["NUMBA_CACHE_DIR"]) / digest
    in_package = package / "__pycache__" / "kernels"
    if _writable(in_package):
        return in_package / digest
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "bgnet-kernels" / digest


def _remove_older(folder: Path, package: Path) -> None:
    """Remove the other digests' folders beside ``folder`` (kernels of sources this package no longer has), and the
    kernels numba cached beside their sources before this module existed."""
    for other in folder.parent.iterdir():
        if other != folder and other.is_dir() and len(other.name) == len(folder.name):
            shutil.rmtree(other, ignore_errors=True)
    for pattern in ("*/__pycache__/*.nbi", "*/__pycache__/*.nbc"):
        for old in package.glob(pattern):
            old.unlink(missing_ok=True)


def use_kernel_cache(package: Path = PACKAGE_DIR) -> Path:
    """Point numba's cache at ``kernel_cache_dir`` (before any kernel is defined); returns the folder."""
    import numba.core.config as numba_config

    folder = kernel_cache_dir(package)
    if folder.parent == package / "__pycache__" / "kernels" and not folder.exists():
        _remove_older(folder, package)
    numba_config.CACHE_DIR = str(folder)  # type: ignore[attr-defined]  # numba sets its config names at run time
    return folder
