"""The fused Triton kernels compile for an H100/H200 (sm_90) on a machine without a GPU (``bench/triton_compile.py``),
with the arithmetic their bit-for-bit equality needs: correctly rounded float32 divisions in the features, no fused
multiply-add in the bear-off race sums."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("triton")

SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "triton_compile.py"


def run(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), "--json"], capture_output=True, text=True, env=env,
                          timeout=600)


def test_both_kernels_compile_for_sm_90_with_exact_arithmetic() -> None:
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    done = run(env)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    features, bearoff = result["features"]["ops"], result["bearoff"]["ops"]
    assert result["arch"] == 90 and result["features"]["cubin_bytes"] > 0 and result["bearoff"]["cubin_bytes"] > 0
    assert features["div.rn.f32"] > 0 and features["div.full.f32"] == features["div.approx.f32"] == 0
    assert features["rcp.approx"] == 0
    assert bearoff["mul.rn.f64"] > 0 and bearoff["add.rn.f64"] > 0 and bearoff["fma.rn.f64"] == 0
    assert features["st.global"] > 0 and bearoff["ld.global"] > 0


def test_the_interpreter_is_refused_in_a_sentence() -> None:
    done = run(os.environ | {"TRITON_INTERPRET": "1"})
    assert done.returncode == 2 and "TRITON_INTERPRET is set" in done.stderr and "Traceback" not in done.stderr
