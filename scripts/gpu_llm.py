#!/usr/bin/env python3
"""LLM-guided evolution on the GPU (section "llm" of scripts/gpu-check), with the scripted LLM
(scripts/scripted-llm) standing in for a model, since GPU hosts have no network:

  1. strategy=full through the command backend (llm=cmd:scripts/scripted-llm);
  2. strategy=full through a mailbox (llm=mailbox:DIR, llm-wait=0): every cycle the run pauses
     with its prompts (exit 75), `evo-opt llm-relay` answers them with the scripted LLM, and the
     run is resumed, until it finishes;
  3. replay-run of run 1: its candidates re-created from its cache with zero LLM calls and
     evaluated afresh, checked candidate by candidate against it;
  4. resume=true of the finished run 1: no GPU work, the same module out.

Prints a table; writes $OUT/llm.json and both run directories' report.json.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTED = os.path.join(ROOT, "scripts", "scripted-llm")


def summary(run_dir):
    rep = json.load(open(os.path.join(run_dir, "report.json")))
    t = rep["tasks"][0]
    totals = rep.get("totals", {})
    return {"task": t.get("name"), "baseline_ms": t.get("baseline_ms"), "best_ms": t.get("best_ms"),
            "speedup": t.get("speedup"), "validity_rate": t.get("validity_rate"),
            "counts": t.get("counts"), "prompt_tokens": totals.get("prompt_tokens"),
            "completion_tokens": totals.get("completion_tokens")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--evo-opt", default=os.environ.get("EVO_OPT", os.path.join(ROOT, "build/bin/evo-opt")))
    ap.add_argument("--out", default=os.environ.get("OUT", "gpu-out"))
    ap.add_argument("--input", default=os.path.join(ROOT, "bench", "softmax.mlir"))
    ap.add_argument("--candidates", type=int, default=24)
    ap.add_argument("--extra", default="", help="more evo-evolve options (e.g. a stand-in worker for a dry run)")
    args = ap.parse_args()
    env = dict(os.environ, EVO_OPT=args.evo_opt)
    work = tempfile.mkdtemp(prefix="evo-llm-")
    rows = {}

    # 1. The command backend.
    run = cmd_run = os.path.join(work, "cmd-run")
    cmd_opts = (f"strategy=full llm=cmd:{SCRIPTED} max-candidates={args.candidates} quiet=true "
                f"{args.extra}")
    t0 = time.time()
    r = subprocess.run([args.evo_opt, args.input, "--evo-lower-to-gpu",
                        f"--evo-evolve={cmd_opts} run-dir={run}",
                        "-o", os.path.join(work, "cmd.mlir")], capture_output=True, text=True, env=env)
    row = {"rc": r.returncode, "seconds": round(time.time() - t0, 1),
           "remarks": [l for l in r.stderr.splitlines() if "remark" in l]}
    if r.returncode == 0:
        row.update(summary(run))
        shutil.copy(os.path.join(run, "report.json"), os.path.join(args.out, "llm-cmd-report.json"))
    else:
        row["stderr"] = r.stderr[-1500:]
    rows["cmd"] = row
    print(f"[llm] cmd: {json.dumps({k: row.get(k) for k in ('rc', 'speedup', 'validity_rate', 'prompt_tokens', 'seconds')})}", flush=True)

    # 2. The mailbox, answered by the relay between pause / resume cycles.
    run, mb = os.path.join(work, "mb-run"), os.path.join(work, "mailbox")
    opts = (f"strategy=full llm=mailbox:{mb} llm-wait=0 run-dir={run} samples=2 compile-threads=1 "
            f"max-candidates={args.candidates} quiet=true {args.extra}")
    cycles, t0, rc = [], time.time(), None
    for cycle in range(40):
        r = subprocess.run([args.evo_opt, args.input, "--evo-lower-to-gpu",
                            f"--evo-evolve={opts}" + (" resume=true" if cycle else ""),
                            "-o", os.path.join(work, "mb.mlir")], capture_output=True, text=True, env=env)
        rc = r.returncode
        paused = [l for l in r.stderr.splitlines() if "paused:" in l]
        if rc != 75:
            cycles.append({"cycle": cycle, "rc": rc})
            if rc != 0:
                cycles[-1]["stderr"] = r.stderr[-1500:]
            break
        relay = subprocess.run([args.evo_opt, "llm-relay", mb, f"--llm=cmd:{SCRIPTED}"],
                               capture_output=True, text=True, env=env)
        cycles.append({"cycle": cycle, "rc": rc, "paused": paused[0] if paused else "",
                       "relay": relay.stdout.strip()})
    row = {"rc": rc, "cycles": len(cycles), "log": cycles, "seconds": round(time.time() - t0, 1)}
    if rc == 0:
        row.update(summary(run))
        shutil.copy(os.path.join(run, "report.json"), os.path.join(args.out, "llm-mailbox-report.json"))
    rows["mailbox"] = row
    print(f"[llm] mailbox: {json.dumps({k: row.get(k) for k in ('rc', 'cycles', 'speedup', 'validity_rate', 'prompt_tokens', 'seconds')})}", flush=True)

    # 3. Replay of run 1, and 4. resume of the finished run 1.
    if rows["cmd"]["rc"] == 0:
        rerun = os.path.join(work, "replay-run")
        t0 = time.time()
        r = subprocess.run([args.evo_opt, args.input, "--evo-lower-to-gpu",
                            f"--evo-evolve={cmd_opts} run-dir={rerun} replay-run={cmd_run}",
                            "-o", os.path.join(work, "replay.mlir")], capture_output=True, text=True, env=env)
        remarks = [l.split("remark: ", 1)[-1] for l in r.stderr.splitlines() if "remark" in l or "warning" in l]
        row = {"rc": r.returncode, "seconds": round(time.time() - t0, 1), "remarks": remarks,
               "replay_check": next((l for l in remarks if "replay of" in l), ""),
               "llm_calls": next((l for l in remarks if "LLM (" in l), "")}
        if r.returncode == 0:
            row.update(summary(rerun))
            row["same_module"] = open(os.path.join(work, "replay.mlir")).read() == open(os.path.join(work, "cmd.mlir")).read()
        else:
            row["stderr"] = r.stderr[-1500:]
        rows["replay"] = row
        print(f"[llm] replay: {row['replay_check']} | {row['llm_calls']}", flush=True)
        t0 = time.time()
        r = subprocess.run([args.evo_opt, args.input, "--evo-lower-to-gpu",
                            f"--evo-evolve={cmd_opts} run-dir={cmd_run} resume=true",
                            "-o", os.path.join(work, "resumed.mlir")], capture_output=True, text=True, env=env)
        same = r.returncode == 0 and open(os.path.join(work, "resumed.mlir")).read() == open(os.path.join(work, "cmd.mlir")).read()
        rows["resume-done"] = {"rc": r.returncode if same else 1, "seconds": round(time.time() - t0, 1),
                               "same_module": same, "stderr": r.stderr[-800:]}
        print(f"[llm] resume of the finished run: same module {same}", flush=True)

    json.dump(rows, open(os.path.join(args.out, "llm.json"), "w"), indent=1)
    print()
    print(f"{'llm run':11s} {'rc':>3s} {'cycles':>6s} {'base ms':>8s} {'best ms':>8s} {'speedup':>8s} "
          f"{'validity':>8s} {'evaluated':>9s} {'tokens in/out':>15s} {'s':>6s}")
    fmt = lambda x, p=3: f"{x:.{p}f}" if isinstance(x, (int, float)) else "-"
    for name, r in rows.items():
        c = r.get("counts") or {}
        tok = f"{r.get('prompt_tokens') or 0}/{r.get('completion_tokens') or 0}"
        print(f"{name:11s} {r['rc']:>3} {r.get('cycles', 1):>6} {fmt(r.get('baseline_ms')):>8s} "
              f"{fmt(r.get('best_ms')):>8s} {fmt(r.get('speedup'), 2):>8s} "
              f"{fmt(r.get('validity_rate'), 2):>8s} {c.get('evaluated', 0):>9} {tok:>15s} {r['seconds']:>6}")
    return 0 if all(r["rc"] == 0 for r in rows.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
