"""The notice a cold start prints while numba compiles bgnet's kernels, so that a first command does not look hung.

The first ``bgnet hint`` on a machine compiles the move generator, the feature encoders and the
net's kernel (numba caches them on disk afterwards). ``compile_notice`` listens to numba's
compile events: at the first bgnet kernel that numba compiles (a cache miss) it prints one line
to stderr, then a dot per kernel, then how long it took. A warm run compiles nothing and prints
nothing; stdout is never touched, so ``--json`` output stays clean.
"""

from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager
from typing import Any, Iterator, TextIO

from numba.core import event

NOTICE = ("first run on this machine: compiling the move generator, features and net kernels "
          "(10-15 seconds, once)")
"""The line printed before the first kernel compiles (after ``PROG: ``)."""
COMPILE_EVENT = "numba:compile"
"""numba's event for compiling one signature of a dispatcher (not fired when it loads from its cache)."""
PACKAGE = "bgnet."
"""Kernels of modules under this prefix are announced; numba's own helpers compile silently inside them."""


class CompileNotice(event.Listener):  # type: ignore[misc]
    """A numba event listener that announces bgnet's kernel compiles on ``stream``: one line, dots, the time."""

    def __init__(self, prog: str, stream: TextIO | None = None) -> None:
        self.prog = prog
        self.stream = stream
        self.started: float | None = None
        """When the first kernel began compiling (perf_counter), None while nothing has compiled."""
        self.kernels = 0
        """bgnet kernels compiled, outermost ones only."""
        self._depth = threading.local()
        self._lock = threading.Lock()

    def _out(self) -> TextIO:
        return self.stream if self.stream is not None else sys.stderr

    def _write(self, text: str) -> None:
        out = self._out()
        out.write(text)
        out.flush()

    def on_start(self, compile_event: Any) -> None:
        """numba is about to compile a kernel: announce the first of them."""
        self._depth.n = getattr(self._depth, "n", 0) + 1
        if self._depth.n == 1 and _is_ours(compile_event):
            with self._lock:
                if self.started is None:
                    self.started = time.perf_counter()
                    self._write(f"{self.prog}: {NOTICE} ")

    def on_end(self, compile_event: Any) -> None:
        """numba finished compiling a kernel: a dot for each outermost bgnet kernel."""
        self._depth.n = getattr(self._depth, "n", 1) - 1
        if self._depth.n == 0 and _is_ours(compile_event) and self.started is not None:
            with self._lock:
                self.kernels += 1
                self._write(".")

    def finish(self) -> None:
        """End the notice's line with the time taken, when it was printed."""
        if self.started is not None:
            self._write(f" done ({self.kernels} kernels, {time.perf_counter() - self.started:.0f} s)\n")


def _is_ours(compile_event: Any) -> bool:
    """Whether the compile event is for a kernel of bgnet (not one of numba's own overloads)."""
    func = getattr(compile_event.data.get("dispatcher"), "py_func", None)
    return str(getattr(func, "__module__", "")).startswith(PACKAGE)


_ACTIVE: list[CompileNotice] = []
"""The notices whose blocks are open, outermost first; only the innermost listens."""


@contextmanager
def compile_notice(prog: str, stream: TextIO | None = None) -> Iterator[CompileNotice]:
    """Announce on ``stream`` (default stderr) the bgnet kernels numba compiles inside the block; silent when none
    does (a warm start). Inside another notice's block this one reports instead (``bgnet serve`` announces its
    start-up, which ends, inside the ``bgnet`` command's block, which lasts as long as the server)."""
    notice = CompileNotice(prog, stream)
    if _ACTIVE:
        event.unregister(COMPILE_EVENT, _ACTIVE[-1])
    _ACTIVE.append(notice)
    event.register(COMPILE_EVENT, notice)
    try:
        yield notice
    finally:
        event.unregister(COMPILE_EVENT, notice)
        _ACTIVE.pop()
        if _ACTIVE:
            event.register(COMPILE_EVENT, _ACTIVE[-1])
        notice.finish()
