#!/usr/bin/env bash
# The one prepared call for a lent GPU machine (docs/TRAINING.md, "On a GPU"): from the repository root,
#   bash bench/gpu_run.sh            (everything goes under $OUT, default runs/gpu_run)
# It uses the machine's python3 (its CUDA build of torch), runs the CUDA tests, the move-generation and self-play
# benchmarks (numba path and torch path, same run), the labelling benchmark, then trains from the released net
# with configs/gpu.toml for the minutes left (TRAIN_MINUTES, default 4), writing checkpoints, TensorBoard logs
# and figures.json under $OUT. Each step's output is kept even when a later step fails.
set -uo pipefail
OUT="${OUT:-runs/gpu_run}"
TRAIN_MINUTES="${TRAIN_MINUTES:-4}"
mkdir -p "$OUT"
log() { echo "[$(date +%T)] $*" | tee -a "$OUT/steps.log"; }

log "machine"; { nvidia-smi; nproc; free -g; python3 --version; } > "$OUT/machine.txt" 2>&1
# The lent machine reaches no package index: use its python3, which holds torch (CUDA), numba, numpy, pytest and
# tensorboard, with this checkout on the path (PY=... overrides, e.g. a venv on a machine that has one).
PY="${PY:-python3}"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
$PY -m pip list 2>/dev/null | grep -i -E "^(torch|numba|numpy|pytest|tensorboard|gnubg) " > "$OUT/packages.txt"
$PY -c "import torch; print(torch.__version__, torch.cuda.is_available(), torch.cuda.get_device_name(0))" \
    > "$OUT/torch.txt" 2>&1
log "CUDA tests"; $PY -m pytest -q -m cuda -p no:cacheprovider > "$OUT/pytest_cuda.txt" 2>&1
log "torch move generator"; $PY bench/movegen_torch.py --json > "$OUT/movegen_torch.json" 2> "$OUT/movegen_torch.err"
log "self-play, host engine (numba move generation, the net on the GPU)"
$PY bench/selfplay.py --seconds 60 --device cuda --json > "$OUT/selfplay.json" 2> "$OUT/selfplay.err"
log "self-play, device engine (every step on the GPU)"
$PY bench/selfplay.py --engine device --seconds 60 --device cuda --json > "$OUT/selfplay_device.json" \
    2> "$OUT/selfplay_device.err"
log "labels: numba on the host against the torch search on the GPU, same positions"
$PY bench/labels.py --positions 300 --tops "" --device cuda --device-scale 20 > "$OUT/labels.txt" 2>&1
log "train ${TRAIN_MINUTES} min"
timeout --signal=INT "$((TRAIN_MINUTES * 60))" $PY -m train --config configs/gpu.toml --init checkpoints/bgnet.pt \
    --out "$OUT/train" --device cuda --engine=device --lr=0.0001 --lr_final=0.00005 > "$OUT/train.txt" 2>&1
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
                  "selfplay_device": load("selfplay_device.json"),
                  "cuda_tests": (out / "pytest_cuda.txt").read_text().strip().splitlines()[-1:]}, indent=1))
PY
log "done"
