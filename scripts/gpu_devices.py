#!/usr/bin/env python3
"""Several GPUs of one host (section "devices" of scripts/gpu-check; needs 2+ GPUs, else it says
so and does nothing): the same bench tasks evolved twice in one call, on GPU 0 alone and with
devices=all, same seed and budget; then one task alone both ways (with devices=all its
candidates are spread over the GPUs). Prints the wall times, the speedups, and whether every
task is valid in both; writes $OUT/devices.json.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The bench suite but its six heaviest (the 8192^3 f16/bf16 matmul and linear, 4096 x 14336,
# bmm_f16, the f32 conv2d: naive baselines of up to seconds per trial would make the one-GPU
# run alone outlast a device call).
DEFAULT = ("relu,row_sum,softmax,gelu,add_bias,sigmoid,col_sum,layernorm,rmsnorm,transpose,"
           "gemv_f32,gemv_f16,matmul_k1m,matmul_f32,matmul_f16_4096,matmul_bias_gelu_f16,"
           "bmm_f32,maxpool2d,conv2d_f16")


def gpus():
    r = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                       capture_output=True, text=True)
    return [l for l in r.stdout.splitlines() if l.strip()] if r.returncode == 0 else []


def module(names):
    """One module holding every bench function (each bench file is a module body)."""
    return "\n".join(open(os.path.join(ROOT, "bench", n + ".mlir")).read() for n in names)


def evolve(evo, src, run_dir, extra, candidates):
    opts = (f"run-dir={run_dir} max-candidates={candidates} seed=7 quiet=true {extra}").strip()
    t0 = time.time()
    r = subprocess.run([evo, src, "--evo-lower-to-gpu", f"--evo-evolve={opts}",
                        "-o", os.path.join(run_dir + ".mlir")], capture_output=True, text=True)
    wall = time.time() - t0
    if r.returncode != 0:
        print(r.stderr[-3000:])
        return None
    rep = json.load(open(os.path.join(run_dir, "report.json")))
    tasks = {t["name"]: {"speedup": t.get("speedup"), "best_ms": t.get("best_ms"),
                         "valid": (t.get("counts") or {}).get("valid"),
                         "evaluated_on": t.get("evaluated_on")} for t in rep["tasks"]}
    # Each GPU's busy time (the sum of its tasks' searches) and the run's phases.
    busy = {}
    for t in tasks.values():
        on = t.get("evaluated_on") or {}
        busy[on.get("device")] = busy.get(on.get("device"), 0) + on.get("seconds", 0)
    return {"wall_s": wall, "tasks": tasks, "phases": rep["meta"].get("phases", {}),
            "busy_s": {str(k): v for k, v in busy.items()}}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default=DEFAULT)
    ap.add_argument("--candidates", type=int, default=12)
    # One task alone: its candidates spread over the GPUs (0: skip this part).
    ap.add_argument("--spread", default="matmul_f32")
    ap.add_argument("--spread-candidates", type=int, default=32)
    a = ap.parse_args()
    names = gpus()
    if len(names) < 2:
        print(f"devices: skipped: {len(names)} GPU(s) on this host (needs 2 or more)")
        return 0
    evo = os.environ.get("EVO_OPT", "evo-opt")
    work = tempfile.mkdtemp(prefix="evo-devices-")
    src = os.path.join(work, "suite.mlir")
    open(src, "w").write(module(a.only.split(",")))
    one = evolve(evo, src, os.path.join(work, "one"), "device=0", a.candidates)
    all_ = evolve(evo, src, os.path.join(work, "all"), "devices=all", a.candidates)
    result = {"gpus": names, "tasks": a.only.split(","), "candidates": a.candidates,
              "one_gpu": one, "all_gpus": all_}
    spread_ok = True
    if a.spread and a.spread != "0":
        ssrc = os.path.join(work, "spread.mlir")
        open(ssrc, "w").write(module([a.spread]))
        s1 = evolve(evo, ssrc, os.path.join(work, "spread-one"), "device=0", a.spread_candidates)
        sa = evolve(evo, ssrc, os.path.join(work, "spread-all"), "devices=all",
                    a.spread_candidates)
        result["spread"] = {"task": a.spread, "candidates": a.spread_candidates,
                            "one_gpu": s1, "all_gpus": sa}
        spread_ok = bool(s1 and sa)
        if spread_ok:
            t1, ta = next(iter(s1["tasks"].values())), next(iter(sa["tasks"].values()))
            spread_ok = (t1["valid"] or 0) > 0 and (ta["valid"] or 0) > 0 and \
                len((ta.get("evaluated_on") or {}).get("devices", [])) == len(names)
            print(f"devices: one task ({a.spread}, {a.spread_candidates} candidates) spread over "
                  f"{(ta.get('evaluated_on') or {}).get('devices')}: wall one GPU "
                  f"{s1['wall_s']:.1f} s, devices=all {sa['wall_s']:.1f} s, speedup "
                  f"{s1['wall_s'] / sa['wall_s']:.2f}x; {t1['speedup']:.2f}x on one GPU, "
                  f"{ta['speedup']:.2f}x spread; valid in both: {spread_ok}")
    json.dump(result, open(os.path.join(a.out, "devices.json"), "w"), indent=1)
    if not spread_ok:
        print("devices: the spread task FAILED (see above)")
    if not one or not all_:
        print("devices: FAILED (a run failed; see above)")
        return 1
    used = sorted({t["evaluated_on"]["device"] for t in all_["tasks"].values()
                   if t.get("evaluated_on")})
    same_validity = all((one["tasks"][k]["valid"] or 0) > 0 and (t["valid"] or 0) > 0
                        for k, t in all_["tasks"].items())
    print(f"devices: {len(names)} x {names[0]}; {len(result['tasks'])} tasks x {a.candidates} "
          f"candidates; GPUs used with devices=all: {used}")
    print(f"devices: wall one GPU {one['wall_s']:.1f} s, devices=all {all_['wall_s']:.1f} s, "
          f"speedup {one['wall_s'] / all_['wall_s']:.2f}x; every task valid in both: {same_validity}")
    for name, r in (("one GPU", one), ("devices=all", all_)):
        ph = ", ".join(f"{k} {v:.1f}" for k, v in sorted(r["phases"].items()))
        busy = ", ".join(f"GPU {k} {v:.1f} s" for k, v in sorted(r["busy_s"].items()))
        print(f"devices: {name}: phases (s) {ph}; searching: {busy}")
    for k in sorted(all_["tasks"]):
        print(f"devices:   {k}: {one['tasks'][k]['speedup']:.2f}x on one GPU, "
              f"{all_['tasks'][k]['speedup']:.2f}x with devices=all")
    return 0 if same_validity and spread_ok and len(used) == len(names) else 1


if __name__ == "__main__":
    sys.exit(main())
