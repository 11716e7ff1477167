#!/usr/bin/env bash
# Times the few-row mma_sync form (tile_sizes [8|16, 16, BK]) against the tiled mma_sync winner
# on nn.Linear at batch 4 and 8 in f16 (bench/gemv_b{4,8}_f16.mlir): each knob set is lowered,
# verified and timed by evo-verify (median of 50 launches, L2 flushed). The few-row form exists
# only in commit d4475c2 (reverted: slower than the tiled ring, docs/bench.md); run this with a
# static build of that commit. Usage on the GPU host:
#   bench/probes/mma_gemv_probe.sh EVO_OPT OUT_DIR
set -u
evo=$1 out=$2
mkdir -p "$out"
for task in gemv_b4_f16 gemv_b8_f16; do
  for knobs in "tile-sizes=32,32,64 stages=8" "tile-sizes=8,16,32 stages=2" "tile-sizes=8,16,64 stages=2" \
               "tile-sizes=8,16,128 stages=2" "tile-sizes=8,16,256 stages=2" "tile-sizes=16,16,128 stages=2"; do
    line=$("$evo" "bench/$task.mlir" --evo-pipeline="output-dir=- chip=sm_90a mma-sync=1 $knobs" \
             --evo-verify="runs=50" -o /dev/null 2>&1 | grep -o "is valid.*\|is invalid.*\|error.*" | head -1)
    echo "$task [$knobs]: $line" | tee -a "$out/mma-gemv-probe.txt"
  done
done
