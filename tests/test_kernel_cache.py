"""Where numba caches the kernels (bgnet.core.kernel_cache): a folder per version of the kernels' sources."""

from __future__ import annotations

import re
from pathlib import Path

import numba

from bgnet.core.kernel_cache import kernel_cache_dir, kernel_files, kernel_sources_digest, use_kernel_cache


def _package(root: Path) -> Path:
    """A small package: one file with a kernel, one without."""
    pkg = root / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "sub" / "_kernels.py").write_text("from numba import njit\n\n@njit(cache=True)\ndef f(x):\n    return x\n")
    (pkg / "cli.py").write_text("def main():\n    return 0\n")
    return pkg


def test_the_digest_follows_the_kernels_sources_only(tmp_path):
    pkg = _package(tmp_path)
    before = kernel_sources_digest(pkg)
    (pkg / "cli.py").write_text("def main():\n    return 1\n")  # no kernel: the cache stays
    assert kernel_sources_digest(pkg) == before
    (pkg / "sub" / "_kernels.py").write_text("from numba import njit\n\n@njit(cache=True)\ndef f(x):\n    return -x\n")
    changed = kernel_sources_digest(pkg)
    assert changed != before and len(changed) == 16
    (pkg / "sub" / "_more.py").write_text("from numba import njit\n\n@njit\ndef g():\n    return 0\n")
    assert kernel_sources_digest(pkg) not in (before, changed)  # a new kernel file counts too


def test_the_cache_folder_is_the_package_s_own_and_drops_older_digests(tmp_path, monkeypatch):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setattr(numba.config, "CACHE_DIR", numba.config.CACHE_DIR)  # restored after the test
    pkg = _package(tmp_path)
    first = use_kernel_cache(pkg)
    assert first == pkg / "__pycache__" / "kernels" / kernel_sources_digest(pkg)
    assert numba.config.CACHE_DIR == str(first)
    first.mkdir(parents=True)
    (first / "f.nbi").write_bytes(b"old")
    (pkg / "sub" / "__pycache__").mkdir()
    legacy = pkg / "sub" / "__pycache__" / "_kernels.f-3.py311.nbi"  # numba's own place, before the digest folders
    legacy.write_bytes(b"older")
    (pkg / "sub" / "_kernels.py").write_text("from numba import njit\n\n@njit(cache=True)\ndef f(x):\n    return 2 * x\n")
    second = use_kernel_cache(pkg)
    assert second != first and not first.exists() and not legacy.exists()  # the old sources' kernels are gone
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "mine"))
    assert kernel_cache_dir(pkg) == tmp_path / "mine" / kernel_sources_digest(pkg)


def test_importing_bgnet_points_numba_at_this_version_s_folder():
    import bgnet  # noqa: F401  (imported by now anyway: the cache is set before any kernel is defined)
    from bgnet.core import _movegen_kernels

    assert numba.config.CACHE_DIR == str(kernel_cache_dir())
    locator = _movegen_kernels.gen_batch._cache._cache_path  # numba's folder for this module's kernels
    assert Path(locator).is_relative_to(kernel_cache_dir())


def test_every_kernel_module_is_in_the_digest():
    """The digest reads each module of bgnet that numba compiles, whichever way it spells the decorator."""
    root = Path(__file__).resolve().parents[1] / "bgnet"
    read = set(kernel_files(root))
    assert {root / "core" / "_movegen_kernels.py", root / "nets" / "pubeval.py", root / "features" / "v2.py"} <= read
    for path in root.rglob("*.py"):
        text = path.read_text()
        if re.search(r"(?m)^\s*@(numba\.)?n?jit\b", text) or re.search(r"(?<![@\w.])(numba\.)?njit\(\w", text):
            assert path in read, path
