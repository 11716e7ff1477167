"""Drives evo-eval-worker through one candidate with TMA tensor maps on the stand-in CUDA driver
(libevo-fake-cuda.so) and prints, from the worker's result and the driver's call log, what the
worker encoded and bound (docs/verification.md, "Tensor maps"). One line per finding, for
FileCheck.

  tensor_map_worker.py WORKER FAKE_CUDA DIR CASE

CASE: "ok" (a map over the input and one over the candidate's scratch), "rewrite" (the kernel
rewrites its tensor map), "encode-fails" (cuTensorMapEncodeTiled fails), "out-of-bounds" (the
map addresses bytes beyond its source), "bad-element-type" (the request's element type is not
the source's).
"""

import json
import os
import re
import subprocess
import sys

worker, fake, out_dir, case = sys.argv[1:5]
os.makedirs(out_dir, exist_ok=True)
log_path = os.path.join(out_dir, "driver.log")
if os.path.exists(log_path):
    os.remove(log_path)

ROWS, COLS = 64, 96  # x: 64 x 96 f32, rows of 384 bytes
kernel = "rewrite_tmap" if case == "rewrite" else "tma"
ptx = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry %s(
  .param .u64 p0,
  .param .u64 p1,
  .param .u64 p2,
  .param .u64 p3,
  .param .u64 p4
)
{
  ret;
}
""" % kernel
dims = [COLS, ROWS + 1] if case == "out-of-bounds" else [COLS, ROWS]
element_type = "f16" if case == "bad-element-type" else "f32"
request = {
    "format": "evo-eval-request/3",
    "mode": "evaluate",
    "buffers": [
        {"name": "x", "role": "input", "kind": "f32", "elements": ROWS * COLS, "range": [-1, 1]},
        {"name": "y", "role": "output", "kind": "f32", "elements": ROWS},
    ],
    "candidates": [{
        "id": "tma",
        "ptx": ptx,
        # Buffers 2 and 3 (after the request's two): a map over the input, a scratch buffer;
        # buffer 4: a map over that scratch.
        "scratch": [
            {"name": "map_x", "role": "tensor_map", "bytes": 128,
             "tensor_map": {"source": 0, "element_type": element_type, "dims": dims,
                            "strides": [COLS * 4], "box": [32, 16], "swizzle": 128}},
            {"name": "acc", "kind": "f32", "elements": 256},
            {"name": "map_acc", "role": "tensor_map", "bytes": 128,
             "tensor_map": {"source": 3, "element_type": "f32", "dims": [256],
                            "strides": [], "box": [64]}},
        ],
        "launches": [{"kernel": kernel, "grid": [4, 1, 1], "block": [128, 1, 1],
                      "args": [2, 0, 1, 3, 4]}],
    }],
    "trials": [{"seed": 7}, {"seed": 8}],
    "rtol": {"f32": 1e-5},
    "timing": {
        "enabled": True, "warmup": 2, "runs": 8, "repeats": 1, "flush_bytes": 1 << 20,
        "check_launches": True, "inputs": {"seed": 99},
    },
}
req_path = os.path.join(out_dir, "request.json")
with open(req_path, "w") as f:
    json.dump(request, f)
env = dict(os.environ, EVO_LIBCUDA=fake, EVO_FAKE_CUDA_LOG=log_path,
           EVO_FAKE_CUDA_CHECKSUMS="address")
if case == "encode-fails":
    env["EVO_FAKE_CUDA_TMAP_FAIL"] = "1"
proc = subprocess.run([worker, req_path, "-"], env=env, capture_output=True, text=True)
print("exit", proc.returncode)
results = [json.loads(l) for l in proc.stdout.splitlines() if l.strip()]
result = next(r for r in results if r.get("event") == "result")
print("verdict", result["verdict"])
print("reason", result["reason"])

with open(log_path) as f:
    log = [l.rstrip("\n") for l in f]
encodes = [l for l in log if l.startswith("tensormap ")]
for l in sorted(set(re.sub(r"addr=\S+ ", "", l) for l in encodes)):
    print(l)
# Launches: (map_x, x, y, acc, map_acc) pointers; the descriptor each map buffer held at the
# launch (the last 128-byte upload to it) must encode the buffer bound as its source.
held = {}
launches = mismatched = 0
sources = set()
for l in log:
    m = re.match(r"htod128 (\S+) first=(\S+)$", l)
    if m:
        held[m.group(1)] = m.group(2)
        continue
    m = re.match(r"launch %s .* args=(\S+)$" % kernel, l)
    if m:
        a = m.group(1).split(",")
        launches += 1
        sources.add(a[1])
        if held.get(a[0]) != a[1] or held.get(a[4]) != a[3]:
            mismatched += 1
if launches:
    print("launches", launches, "input sets", len(sources),
          "launches whose maps encode their bound sources:", launches - mismatched)
