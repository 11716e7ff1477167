"""Drives evo-eval-worker through one timed candidate on the stand-in CUDA driver and checks,
from the driver's call log, how the timed launches were kept from finding their answer in their
outputs (docs/verification.md, "Timing").

  launch_guard.py WORKER FAKE_CUDA CHECKSUMS(address|constant) CHECK_LAUNCHES(1|0) DIR [MODE]

MODE: "evaluate" (default) or "time" (the finalists' interleaved re-measurement, 2 rounds).

The stand-in driver runs no kernel; with $EVO_FAKE_CUDA_CHECKSUMS it answers the worker's
checksum helper: "address" makes the reference's outputs on the two timing sets differ (an op
that depends on its inputs), "constant" makes them equal (an op that ignores them). Prints one
line per finding, for FileCheck.
"""

import json
import os
import re
import subprocess
import sys

worker, fake, sums, check_launches, out_dir = sys.argv[1:6]
mode = sys.argv[6] if len(sys.argv) > 6 else "evaluate"
os.makedirs(out_dir, exist_ok=True)
log_path = os.path.join(out_dir, "driver.log")
if os.path.exists(log_path):
    os.remove(log_path)

N = 4096
RUNS, REPEATS, WARMUP = 20, 2, 3
ptx = """.version 8.0
.target sm_90
.address_size 64
.visible .entry relu(
  .param .u64 relu_param_0,
  .param .u64 relu_param_1,
  .param .u64 relu_param_2
)
{
  ret;
}
"""
request = {
    "format": "evo-eval-request/3",
    "mode": mode,
    "rounds": 2,
    "buffers": [
        {"name": "x", "role": "input", "kind": "f32", "elements": N, "range": [-1, 1]},
        {"name": "y", "role": "output", "kind": "f32", "elements": N},
    ],
    "candidates": [{
        "id": "relu",
        "ptx": ptx,
        "scratch": [{"name": "s", "kind": "f32", "elements": 256}],
        "launches": [{"kernel": "relu", "grid": [16, 1, 1], "block": [256, 1, 1], "args": [0, 1, 2]}],
    }],
    "trials": [{"seed": 7}],
    "rtol": {"f32": 1e-5},
    "timing": {
        "enabled": True, "warmup": WARMUP, "runs": RUNS, "repeats": REPEATS,
        "flush_bytes": 1 << 20, "check_launches": check_launches == "1",
        "inputs": {"seed": 99},
    },
}
req_path = os.path.join(out_dir, "request.json")
with open(req_path, "w") as f:
    json.dump(request, f)
env = dict(os.environ, EVO_LIBCUDA=fake, EVO_FAKE_CUDA_LOG=log_path, EVO_FAKE_CUDA_CHECKSUMS=sums)
proc = subprocess.run([worker, req_path, "-"], env=env, capture_output=True, text=True)
print("exit", proc.returncode)
results = [json.loads(l) for l in proc.stdout.splitlines() if l.strip()]
result = next(r for r in results if r.get("event") == "result")
timing = result.get("timing", {})
print("verdict", result["verdict"], result["reason"])
print("launch_guard", timing.get("launch_guard"))
print("launches", timing.get("launches"), "checked", timing.get("checked_launches"))

with open(log_path) as f:
    log = [l.rstrip("\n") for l in f]

# Every launch after the module's reload (the timing phase; the last "load" line before the
# candidate's last launches).
last_load = max(i for i, l in enumerate(log) if l.startswith("load "))
phase = log[last_load:]
launches = []  # (index in phase, input pointer, output pointer)
for i, l in enumerate(phase):
    m = re.match(r"launch relu .* args=([^,]+),([^,]+),([^,]+)$", l)
    if m:
        launches.append((i, m.group(1), m.group(2), m.group(3)))
print("timing-phase launches", len(launches))
inputs = [x for _, x, _, _ in launches]
outputs = {y for _, _, y, _ in launches}
print("distinct inputs", len(set(inputs)), "distinct outputs", len(outputs))
out_ptr = launches[0][2]
alternating = all(inputs[k] != inputs[k + 1] for k in range(len(inputs) - 1))
print("consecutive launches alternate inputs:", "yes" if alternating else "no")

# Output-sized poison (memset32 of the output pointer, N elements) between consecutive launches.
def poisoned_between(a, b):
    return any(re.match(r"memset32 %s %d " % (out_ptr, N), l) for l in phase[a + 1:b])

gaps = [poisoned_between(launches[k][0], launches[k + 1][0]) for k in range(len(launches) - 1)]
print("launches preceded by an output poison:", sum(gaps), "of", len(gaps))
# (Each launch's own scratch pointer: mode "time" allocates scratch afresh every round.)
scratch_gaps = [any(re.match(r"memset32 %s 256 " % launches[k + 1][3], l)
                    for l in phase[launches[k][0] + 1:launches[k + 1][0]])
                for k in range(len(launches) - 1)]
print("launches preceded by a scratch poison:", sum(scratch_gaps), "of", len(scratch_gaps))
# The property itself: a launch finds either poison or the answer for the other input set.
exposed = sum(1 for k in range(len(gaps)) if inputs[k] == inputs[k + 1] and not gaps[k])
print("launches that may find their own answer:", exposed)
# Launches after the reference's two untimed runs: the timed phase proper (calibration,
# warm-ups, timed launches). With the two sets: the first two launches are those runs.
timed = gaps[2:] if len(set(inputs)) == 2 else gaps[1:]
print("timed-phase launches after a poison:", sum(timed), "of", len(timed))

# Every checked launch is compared with the reference copy of its own input set: the
# evo_check_launch after a launch on input X always names the same reference copy, and the two
# sets name different ones.
ref_of = {}
consistent = True
checked_at = set()
for k, (i, x, _, _) in enumerate(launches):
    end = launches[k + 1][0] if k + 1 < len(launches) else len(phase)
    for l in phase[i + 1:end]:
        m = re.match(r"launch evo_check_launch .* args=([^,]+),([^,]+),", l)
        if m:
            checked_at.add(k)
            if m.group(1) != out_ptr:
                consistent = False
            ref_of.setdefault(x, set()).add(m.group(2))
print("checked inputs", len(ref_of),
      "one reference per input:", "yes" if consistent and all(len(v) == 1 for v in ref_of.values()) else "no",
      "distinct references:", len({r for v in ref_of.values() for r in v}))
# The last two timed launches are checked (LaunchSelection.h), one of each set when the sets
# alternate: a kernel that stops working keeps one set's answer, which only the other set's
# launch shows.
last_two = {len(launches) - 2, len(launches) - 1}
print("last two launches checked:", "yes" if last_two <= checked_at else "no",
      "on inputs", len({launches[k][1] for k in last_two}))
