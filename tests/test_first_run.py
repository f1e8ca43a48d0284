"""The cold-start notice: a line on stderr while numba compiles bgnet's kernels, nothing on a warm start."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numba

from bgnet.core.first_run import NOTICE, compile_notice

POSITION, DICE = "4HPwATDgc/ABMA", "31"


def _kernel(module: str):  # type: ignore[no-untyped-def]
    """A fresh (never compiled, uncached) numba kernel that claims to live in ``module``."""
    def double(x):  # type: ignore[no-untyped-def]
        return 2 * x

    double.__module__ = module
    return numba.njit(double)


def test_notice_announces_a_bgnet_kernel_compile_once() -> None:
    stream = io.StringIO()
    kernel = _kernel("bgnet.probe")
    with compile_notice("bgnet", stream) as notice:
        assert kernel(3) == 6
        assert kernel(4) == 8  # the same signature: already compiled, no second dot
    text = stream.getvalue()
    assert text.startswith(f"bgnet: {NOTICE} .") and text.endswith(" s)\n")
    assert notice.kernels == 1 and text.count(".") >= 1


def test_notice_is_silent_when_nothing_of_bgnet_compiles() -> None:
    stream = io.StringIO()
    other = _kernel("somebody_else")
    with compile_notice("bgnet", stream) as notice:
        assert other(5) == 10
    assert stream.getvalue() == "" and notice.kernels == 0 and notice.started is None


def test_a_notice_inside_another_reports_alone_and_the_outer_one_listens_again_after_it() -> None:
    """``bgnet serve`` announces its start-up inside the command's own notice: one line, not two mixed."""
    outer_stream, inner_stream = io.StringIO(), io.StringIO()
    first, second = _kernel("bgnet.probe_inner"), _kernel("bgnet.probe_after")
    with compile_notice("bgnet", outer_stream) as outer:
        with compile_notice("bgnet serve", inner_stream) as inner:
            assert first(1) == 2
        assert inner_stream.getvalue().startswith(f"bgnet serve: {NOTICE} .") and outer.kernels == 0
        assert second(2) == 4
    assert inner.kernels == 1 and outer.kernels == 1
    assert outer_stream.getvalue().startswith(f"bgnet: {NOTICE} .")


def _bgnet_command() -> list[str]:
    """The installed ``bgnet`` script next to this interpreter, else ``python -m bgnet``."""
    script = shutil.which("bgnet", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "bgnet"]


def _hint(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*_bgnet_command(), "hint", POSITION, DICE], capture_output=True, text=True, env=env,
                          timeout=600)


def test_first_hint_on_a_cold_machine_says_it_compiles_then_later_runs_are_silent(tmp_path: Path) -> None:
    """THE ONE COLD RUN OF THE SUITE (about 20-30 s): an empty numba cache and bgnet cache, as after pip install."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba"), "BGNET_CACHE": str(tmp_path / "bgnet")}
    cold = _hint(env)
    assert cold.returncode == 0, cold.stderr
    assert f"bgnet: {NOTICE}" in cold.stderr
    assert NOTICE not in cold.stdout and "legal plays" in cold.stdout and "8/5 6/5" in cold.stdout
    warm = _hint(env)
    assert warm.returncode == 0, warm.stderr
    assert NOTICE not in warm.stderr and warm.stdout == cold.stdout


def test_first_run_bench_lists_where_a_cold_command_compiles() -> None:
    """``bench/first_run.py --kernels``: one cold command (here ``bgnet moves``, the move generator alone) with its
    kernels' compile times, longest first."""
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, str(root / "bench" / "first_run.py"), "--kernels", "--", "moves", POSITION,
                          DICE], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(root)})
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith(f"bgnet moves {POSITION} {DICE}: ") and "s compiling" in lines[0]
    assert any(line.strip().endswith("bgnet.core._movegen_kernels.gen_single") for line in lines[1:])
    seconds = [float(line.split()[0]) for line in lines[1:]]
    assert seconds == sorted(seconds, reverse=True) and seconds[0] > 0
    bad = subprocess.run([sys.executable, str(root / "bench" / "first_run.py"), "--kernels", "--", "moves", "nonsense",
                          DICE], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(root)})
    assert bad.returncode == 2 and "Position ID" in bad.stderr and "Traceback" not in bad.stderr
