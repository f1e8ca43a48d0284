#!/usr/bin/env bash
# The one prepared call for a lent GPU machine (docs/TRAINING.md, "On a GPU"): from the repository root,
#   bash bench/gpu_run.sh            (everything goes under $OUT, default runs/gpu_run)
# It uses the machine's python3 (its CUDA build of torch) and runs, each step under its own time limit so that the
# whole call ends by BUDGET seconds (default 570): first the CUDA tests of the fused Triton kernels (FUSED=0 skips
# them and their rows); (MOVEGEN=1) the move-generation benchmark; self-play with learning, the numba host engine and
# the device engine in the same run, the device engine as configs/gpu.toml sets it (65,536 games a step, TF32 matrix
# products) with a profile of where a step's time goes, then with the device kernels fused (--device-kernels fused:
# feature set 2 and the bear-off lookups each one Triton kernel, bgnet.core.device_kernels) with its profile; (BIG=1)
# with twice the games a step (BIG_BATCH, default 131,072: the host's launches a step are the same for any batch),
# (GRAPHS=1) at that batch with each fit's TD sweep and minibatch loop replayed from CUDA graphs (1% in the fifth
# run), (COMPILE=1) with the torch features compiled by torch.compile, and (FP32=1) with float32 products; the
# labelling benchmark (numba on one core against the torch search on the GPU, float32 and TF32, full and with the last
# level among pubeval's best 10, each with the torch ops and the fused kernels); then, for TRAIN_MINUTES (default 0),
# training from the released net with configs/gpu.toml (TRAIN_KERNELS=fused: the device kernels fused); and last, side
# by side, the other CUDA tests (at most TEST_SECONDS, default 240) and, with the seconds left, search labels of the
# rounds' candidates made on the GPU (bench/device_labels.py, LABEL_PLY=1, LABEL_PART candidates a part,
# LABEL_PRECISION=highest or high for TF32, LABEL_TOP=10 for the release's kind of 2-ply labels, LABEL_KERNELS=fused
# for the fused features). Those tests go last so that they slow no benchmark. The device tool brings back at most 8
# files of 16 MiB: the logs and figures go into one logs.tgz (figures.json beside it), the labels into labels_KKK.npz
# parts.
set -uo pipefail
OUT="${OUT:-runs/gpu_run}"
TRAIN_MINUTES="${TRAIN_MINUTES:-0}"
BUDGET="${BUDGET:-570}"
LABEL_PLY="${LABEL_PLY:-1}"
LABEL_PART="${LABEL_PART:-900000}"
LABEL_PRECISION="${LABEL_PRECISION:-highest}"
LABEL_TOP="${LABEL_TOP:-0}"
TEST_SECONDS="${TEST_SECONDS:-240}"
START=$SECONDS
WORK="$OUT/work"
mkdir -p "$WORK"
log() { echo "[$(date +%T) +$((SECONDS - START))s] $*" | tee -a "$WORK/steps.log"; }
left() { echo $((BUDGET - (SECONDS - START))); }
# step LIMIT NAME CMD...: run CMD with at most LIMIT seconds (less when the budget has less left), output to NAME.
step() {
    local limit=$1 name=$2; shift 2
    local room=$(($(left) - 25))  # keep time to pack the results
    ((room < limit)) && limit=$room
    if ((limit < 10)); then log "skip $name (no time left)"; return; fi
    log "$name (at most ${limit}s)"
    timeout --signal=INT --kill-after=10 "$limit" "$@" > "$WORK/$name" 2> "$WORK/$name.err"
    log "$name: exit $?"
}

# The lent machine reaches no package index: use its python3, which holds torch (CUDA), numba, numpy, pytest and
# tensorboard, with this checkout on the path (PY=... overrides, e.g. a venv on a machine that has one).
PY="${PY:-python3}"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
log "machine"
{ nvidia-smi; nproc; free -g; $PY --version; $PY -m pip list 2>/dev/null \
    | grep -i -E "^(torch|numba|numpy|pytest|tensorboard|gnubg) ";
  $PY -c "import torch; print(torch.__version__, torch.cuda.is_available(), torch.cuda.get_device_name(0))"; } \
    > "$WORK/machine.txt" 2>&1
# The fused kernels' CUDA tests first (compiled for this GPU, equal to the numba kernels, the same games): the
# fused rows below mean nothing without them.
FUSED_TESTS="tests/test_features_v2_fused.py tests/test_bearoff_fused.py"
if [[ "${FUSED:-1}" == 1 ]]; then
    step 120 pytest_fused.txt $PY -m pytest -q -m cuda $FUSED_TESTS -p no:cacheprovider --durations=5
fi
if [[ "${MOVEGEN:-0}" == 1 ]]; then  # opt in: 129-137 M afterstates/s in the fourth and fifth runs
    step 45 movegen_torch.json $PY bench/movegen_torch.py --json
fi
step 75 selfplay_host.json $PY bench/selfplay.py --seconds 10 --device cuda --batch 16384 --json
step 90 selfplay_device.json $PY bench/selfplay.py --engine device --seconds 20 --device cuda --json \
    --profile-table "$WORK/profile.txt"
if [[ "${FUSED:-1}" == 1 ]]; then  # the features and bear-off lookups from Triton kernels, against the torch ops above
    step 100 selfplay_device_fused.json $PY bench/selfplay.py --engine device --seconds 20 --device cuda --json \
        --device-kernels fused --profile-table "$WORK/profile_fused.txt"
fi
if [[ "${BIG:-0}" == 1 ]]; then  # opt in: twice the games a step (the launches a step are the same)
    step 90 selfplay_device_big.json $PY bench/selfplay.py --engine device --seconds 20 --device cuda --json \
        --batch "${BIG_BATCH:-131072}"
fi
if [[ "${GRAPHS:-0}" == 1 ]]; then  # opt in, the fits' loops from CUDA graphs, against the big batch's eager fits above
    step 90 selfplay_device_graphs.json $PY bench/selfplay.py --engine device --seconds 20 --device cuda --json \
        --batch "${BIG_BATCH:-131072}" --cuda-graphs
fi
if [[ "${COMPILE:-0}" == 1 ]]; then  # opt in: torch.compile of the features (on a 2-core CPU it did not finish in 10 min)
    step 150 selfplay_device_compiled.json $PY bench/selfplay.py --engine device --seconds 20 --device cuda --json \
        --compile-features
fi
if [[ "${FP32:-0}" == 1 ]]; then  # opt in: measured in the third run (0.95x the TF32 figure)
    step 80 selfplay_device_fp32.json $PY bench/selfplay.py --engine device --seconds 20 --device cuda --json \
        --matmul-precision highest
fi
step 150 labels.txt $PY bench/labels.py --positions 200 --tops 10 --device cuda --device-scale 30 --tf32 \
    $([[ "${FUSED:-1}" == 1 ]] && echo --fused-kernels)
if ((TRAIN_MINUTES > 0)); then
    step $((TRAIN_MINUTES * 60)) train.txt $PY -m train --config configs/gpu.toml --init checkpoints/bgnet.pt \
        --out "$WORK/train" --device cuda --engine=device --device_kernels="${TRAIN_KERNELS:-torch}" \
        --lr=0.0001 --lr_final=0.00005
fi
# The CUDA-graph tests in a second process: a graph that went wrong can leave its CUDA context unusable.
step "$TEST_SECONDS" pytest_cuda.txt bash -c "$PY -m pytest -q -m 'cuda and not cuda_graphs' -p no:cacheprovider \
    --durations=10 $(printf -- '--ignore=%s ' $FUSED_TESTS); $PY -m pytest -q -m cuda_graphs -p no:cacheprovider" &
tests=$!
room=$(($(left) - 40))
if ((room >= 60)); then
    step $((room + 10)) device_labels.json $PY bench/device_labels.py "$OUT" --seconds "$room" --ply "$LABEL_PLY" \
        --part "$LABEL_PART" --matmul-precision "$LABEL_PRECISION" --top "$LABEL_TOP" \
        --device-kernels "${LABEL_KERNELS:-torch}"
fi
wait "$tests"
log "figures"
$PY - "$WORK" <<'PY' > "$OUT/figures.json"
import json, pathlib, re, sys
work = pathlib.Path(sys.argv[1])
def load(name):
    try:
        return json.loads((work / name).read_text())
    except (OSError, ValueError):
        return None
tests = [line for name in ("pytest_fused.txt", "pytest_cuda.txt") if (work / name).exists()
         for line in (work / name).read_text().splitlines()
         if re.search(r"(passed|failed|error|deselected).* in [0-9.]+s", line)]
print(json.dumps({name: load(name + ".json") for name in ("movegen_torch", "selfplay_host", "selfplay_device",
                                                          "selfplay_device_fused",
                                                          "selfplay_device_big",
                                                          "selfplay_device_graphs",
                                                          "selfplay_device_compiled", "selfplay_device_fp32",
                                                          "device_labels")}
                 | {"cuda_tests": tests}, indent=1))
PY
log "done"
tar -czf "$OUT/logs.tgz" --exclude="*.pt" --exclude="events.out.*" -C "$OUT" work && rm -rf "$WORK"
