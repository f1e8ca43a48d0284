"""A second process that compiles kernels during a cold start, so that the first command after an install uses two cores.

Numba compiles one kernel at a time in a process. On the first run after an install the
command itself compiles the move generator while this process (``python -m
bgnet.app.warm``) compiles the net's fused kernel with its feature encoders, then the
cube and bear-off kernels, into numba's on-disk cache; it prints each group's name when
that group is in the cache. The command waits for the ``net`` line before its first
evaluation (``bgnet.core.first_run.wait_for_warm``) and then loads the kernel instead of
compiling it again. Started only on a machine with two or more cores, only when the
command has started compiling; stopped when the command ends.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from typing import IO

from bgnet.core import first_run

GROUPS = ("net", "cube")
"""What the warm process compiles, in order: the name it prints after each group is cached."""
DISABLE_ENV = "BGNET_NO_WARM"
"""Set (to anything non-empty) to compile everything in the command's own process."""


class WarmProcess:
    """The running warm-up process and the thread that turns its lines into ``first_run`` signals."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        for group in GROUPS:
            first_run.expect_warm(group)
        self._reader = threading.Thread(target=self._read, args=(proc.stdout,), daemon=True)
        self._reader.start()

    def _read(self, stream: IO[str] | None) -> None:
        try:
            for line in stream or ():
                first_run.warmed(line.strip())
        finally:  # the process ended, however: nobody waits for a group it will never announce
            for group in GROUPS:
                first_run.warmed(group)

    def stop(self) -> None:
        """End the process if it is still compiling (its cache writes are atomic) and release any waiter."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._reader.join(timeout=5)


def start_warm_process() -> WarmProcess | None:
    """Start compiling the net and cube kernels in a second process, or None on one core or when disabled."""
    if os.environ.get(DISABLE_ENV) or (os.cpu_count() or 1) < 2:
        return None
    proc = subprocess.Popen([sys.executable, "-m", "bgnet.app.warm"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return WarmProcess(proc)


def warm_kernels(announce: IO[str]) -> None:
    """Compile (or load) each group's kernels with the argument types a command uses, naming each group when done."""
    import numpy as np

    from bgnet.core.position import Position
    from bgnet.core.resources import default_checkpoint
    from bgnet.nets.fastnet import load_evaluator

    start = np.array([Position.start().board], np.int8)
    evaluator = load_evaluator(default_checkpoint())
    nets = getattr(evaluator, "nets", {"contact": evaluator})
    for net in nets.values():
        net._fused_probs(start)
    print("net", file=announce, flush=True)

    from bgnet.cube._cube_kernels import kind_and_efficiency
    from bgnet.nets.bearoff import is_bearoff

    kind_and_efficiency(start[0])
    is_bearoff(start)
    print("cube", file=announce, flush=True)


if __name__ == "__main__":
    warm_kernels(sys.stdout)
