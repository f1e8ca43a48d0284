"""Compile the fused Triton kernels for a CUDA GPU without one: what the compiler makes of them, and how long it takes.

    python bench/triton_compile.py [--arch 90] [--json]

Triton compiles ahead of time for a named target (its own LLVM and ptxas, no driver), so a machine without a GPU
checks that ``bgnet.features.v2_fused`` and ``bgnet.nets.bearoff_fused`` compile for an H100 or H200 (sm_90) and
what their machine code does: the features' divisions must be the correctly rounded ``div.rn.f32`` (no approximate
division or reciprocal), and the bear-off race sums separate ``mul.rn.f64`` and ``add.rn.f64`` (no fused
multiply-add, which would change their last bits). Prints, per kernel, the seconds it took to compile, its PTX's
size, those instructions counted, and its global loads and stores. It compiles into a fresh temporary cache, so the
seconds are a first run's. Needs Triton and ``TRITON_INTERPRET`` unset (the interpreter compiles nothing).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

OPS = ("div.rn.f32", "div.full.f32", "div.approx.f32", "rcp.approx", "mul.rn.f64", "add.rn.f64", "fma.rn.f64",
       "ld.global", "st.global")
"""PTX instructions counted in each kernel."""


def compile_kernels(arch: int) -> dict[str, dict[str, object]]:
    """Each fused kernel compiled for ``sm_{arch}``: seconds, PTX characters and ``OPS`` counted."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from bgnet.features import v1, v2, v2_fused
    from bgnet.nets import bearoff_fused, bearoff_tables as bt

    kernels = {
        "features": (v2_fused._encode_kernel,
                     {"boards_ptr": "*i8", "out_ptr": "*fp32", "esc_ptr": "*i8", "runs_ptr": "*i64", "n_rows": "i32"},
                     {"WIDTH": v2.WIDTH, "SET1": v1.WIDTH, "EXPERT": v2.EXPERT_PER_SIDE, "BLOCK": v2_fused.BLOCK}, {}),
        "bearoff": (bearoff_fused._lookup_kernel,
                    {"boards_ptr": "*i8", "mask_ptr": "*i8", "probs_ptr": "*fp64", "binom_ptr": "*i64",
                     "rolls_ptr": "*fp64", "done_ptr": "*fp64", "first_before_ptr": "*fp64", "first_by_ptr": "*fp64",
                     "win_ptr": "*fp64", "n_rows": "i32"},
                    {"FULL": bt.FULL_START, "TWO": bt.N_TWO_SIDED, "TWO_CHECKERS": bt.TWO_SIDED_CHECKERS,
                     "ROLLS": bt.MAX_ROLLS, "BLOCK": bearoff_fused.BLOCK}, bearoff_fused.COMPILE_OPTIONS),
    }
    out = {}
    for name, (fn, pointers, constants, options) in kernels.items():
        signature = pointers | {k: "constexpr" for k in constants}
        start = time.perf_counter()
        compiled = triton.compile(ASTSource(fn, signature, constexprs=constants), target=GPUTarget("cuda", arch, 32),
                                  options=options)
        seconds = time.perf_counter() - start
        ptx = compiled.asm["ptx"]
        out[name] = {"seconds": round(seconds, 2), "ptx_chars": len(ptx), "cubin_bytes": len(compiled.asm["cubin"]),
                     "ops": {op: ptx.count(op) for op in OPS}}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", type=int, default=90, help="the GPU's compute capability, major and minor: 90 = sm_90")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # the default of the Triton that torch's CUDA builds ship
    with tempfile.TemporaryDirectory(prefix="bgnet-triton-") as cache:
        os.environ["TRITON_CACHE_DIR"] = cache  # read when Triton is imported: a first compilation, timed
        from bgnet.core.device_kernels import triton_available, triton_interprets

        if not triton_available():
            ap.error("Triton is not installed (pip install triton, or the dev extra)")
        if triton_interprets():
            ap.error("TRITON_INTERPRET is set: the interpreter compiles nothing; unset it")
        result = compile_kernels(args.arch)
    if args.json:
        print(json.dumps({"arch": args.arch} | result))
        return 0
    for name, r in result.items():
        ops = ", ".join(f"{op} {n}" for op, n in r["ops"].items())  # type: ignore[attr-defined]
        print(f"{name}: compiled for sm_{args.arch} in {r['seconds']} s, {r['ptx_chars']:,} characters of PTX, "
              f"{r['cubin_bytes']:,} bytes of cubin; {ops}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
