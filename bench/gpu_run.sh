#!/usr/bin/env bash
# The one prepared call for a lent GPU machine (docs/TRAINING.md, "On a GPU"): from the repository root,
#   bash bench/gpu_run.sh            (everything goes under $OUT, default runs/gpu_run)
# It sets up a venv with the machine's CUDA build of torch, runs the CUDA tests, the move-generation and self-play
# benchmarks (numba path and torch path, same run), the labelling benchmark, then trains from the released net
# with configs/gpu.toml for the minutes left (TRAIN_MINUTES, default 6), writing checkpoints, TensorBoard logs
# and figures.json under $OUT. Each step's output is kept even when a later step fails.
set -uo pipefail
OUT="${OUT:-runs/gpu_run}"
TRAIN_MINUTES="${TRAIN_MINUTES:-6}"
mkdir -p "$OUT"
log() { echo "[$(date +%T)] $*" | tee -a "$OUT/steps.log"; }

log "machine"; { nvidia-smi; nproc; free -g; python3 --version; } > "$OUT/machine.txt" 2>&1
if [ ! -x .venv/bin/python ]; then
    log "venv"
    python3 -m venv .venv && .venv/bin/pip install -q torch && .venv/bin/pip install -q -e '.[dev,ref]' \
        > "$OUT/install.txt" 2>&1
fi
PY=.venv/bin/python
$PY -c "import torch; print(torch.__version__, torch.cuda.is_available(), torch.cuda.get_device_name(0))" \
    > "$OUT/torch.txt" 2>&1
log "CUDA tests"; $PY -m pytest -q -m cuda -p no:cacheprovider > "$OUT/pytest_cuda.txt" 2>&1
log "torch move generator"; $PY bench/movegen_torch.py --json > "$OUT/movegen_torch.json" 2> "$OUT/movegen_torch.err"
log "self-play"; $PY bench/selfplay.py --seconds 60 --json > "$OUT/selfplay.json" 2> "$OUT/selfplay.err"
log "labels"; $PY bench/labels.py --positions 200 > "$OUT/labels.txt" 2>&1
log "train ${TRAIN_MINUTES} min"
timeout --signal=INT "$((TRAIN_MINUTES * 60))" $PY -m train --config configs/gpu.toml --init checkpoints/bgnet.pt \
    --out "$OUT/train" --device cuda > "$OUT/train.txt" 2>&1
log "figures"
$PY - "$OUT" <<'PY' > "$OUT/figures.json"
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
def load(name):
    try:
        return json.loads((out / name).read_text())
    except (OSError, ValueError):
        return None
print(json.dumps({"movegen_torch": load("movegen_torch.json"), "selfplay": load("selfplay.json"),
                  "cuda_tests": (out / "pytest_cuda.txt").read_text().strip().splitlines()[-1:]}, indent=1))
PY
log "done"
