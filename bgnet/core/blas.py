"""The BLAS under numpy: how many threads its matrix products use in this process."""

from __future__ import annotations

import glob
import os


def _openblas_libraries() -> list[str]:
    """Paths of the OpenBLAS libraries this process may use: those already mapped (Linux), and numpy's bundled one."""
    found: set[str] = set()
    try:
        with open("/proc/self/maps") as fh:
            for line in fh:
                path = line.split()[-1]
                if "openblas" in path.lower() and ".so" in path:
                    found.add(os.path.realpath(path))
    except OSError:
        pass
    import numpy as np

    bundled = os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs", "*openblas*")
    found.update(os.path.realpath(path) for path in glob.glob(bundled))
    return sorted(found)


def limit_blas_threads(n: int = 1) -> bool:
    """Ask the OpenBLAS that numpy loaded to use ``n`` threads; True when a library took the setting.

    Two reasons to call it: many small products at once (a server's requests) only
    fight over the cores with BLAS threads, and a product's rounding depends on how
    many threads split it (a process and its Ray workers must agree bit for bit).
    """
    import ctypes

    done = False
    for path in _openblas_libraries():
        try:
            lib = ctypes.CDLL(path)  # already loaded by numpy: the same handle
        except OSError:
            continue
        for name in ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
                     "openblas_set_num_threads64_", "openblas_set_num_threads"):
            setter = getattr(lib, name, None)
            if setter is not None:
                setter(ctypes.c_int(n))
                done = True
                break
    return done
