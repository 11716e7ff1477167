"""What scripts/gpu_bench.py and scripts/gpu_kbench.py share: evolving one MLIR file with
evo-evolve (LLM-free) and verifying the evolved module end to end with evo-verify, and timing a
PyTorch function eager and under torch.compile in the same process.

Imported, never run. Needs torch (and triton for the timing) only when those functions are called.
"""

import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_args(what, candidates, seconds, extra=None):
    """The options both scripts take (--evo-opt, --out, --only, --candidates, --seconds, --chip),
    plus those `extra(ap)` adds; --chip defaults to sm_90a on compute capability 9.0 (where
    wgmma and TMA exist), else sm_90."""
    import torch
    ap = argparse.ArgumentParser()
    ap.add_argument("--evo-opt", default=os.environ.get("EVO_OPT", os.path.join(ROOT, "build/bin/evo-opt")))
    ap.add_argument("--out", default=os.environ.get("OUT", "gpu-out"))
    ap.add_argument("--only", default="", help=f"comma-separated {what} names")
    ap.add_argument("--candidates", type=int, default=candidates)
    ap.add_argument("--seconds", type=float, default=seconds, help="evolve budget (time-budget)")
    ap.add_argument("--chip", default="", help="PTX target (default: sm_90a on compute capability "
                                               "9.0, else sm_90)")
    if extra:
        extra(ap)
    args = ap.parse_args()
    if not args.chip:
        args.chip = "sm_90a" if torch.cuda.get_device_capability(0) == (9, 0) else "sm_90"
    return args


def first_error(text):
    """The first line of a diagnostic that says what failed (`... error: WHAT`), else the first line."""
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    for l in lines:
        if "error:" in l:
            return l[l.index("error:") + len("error:"):].strip()
    return lines[0] if lines else ""


def evolve(evo, src, name, work, candidates, seconds, chip, extra=""):
    """evo-evolve `src` (built-in mutators, no LLM), emit the winner's PTX, then evo-verify the
    evolved module (every task together, the scratch in between). Returns a row: evolve_s,
    evolve_rc, error (head and tail of stderr on failure), the report's tasks, baseline_ms,
    evaluated, valid, verify (the verdict), evolved_ms, roofline and ceilings."""
    run_dir = os.path.join(work, "runs", name)
    out_dir = os.path.join(work, "ptx", name)
    mlir = os.path.join(work, name + ".evolved.mlir")
    evolve_opts = (f"run-dir={run_dir} max-candidates={candidates} time-budget={seconds} "
                   f"quiet=true generations=1000 chip={chip} {extra}").strip()
    t0 = time.time()
    r = subprocess.run([evo, src, "--evo-lower-to-gpu", f"--evo-evolve={evolve_opts}",
                        f"--evo-emit-ptx=output-dir={out_dir} chip={chip}",
                        "-o", mlir], capture_output=True, text=True)
    row = {"evolve_s": round(time.time() - t0, 1), "evolve_rc": r.returncode}
    if r.returncode != 0:
        err = r.stderr.strip()
        # The first lines say what failed; the end, where.
        row["error"] = err if len(err) <= 1500 else err[:900] + "\n...\n" + err[-600:]
        return row
    report = json.load(open(os.path.join(run_dir, "report.json")))
    tasks = report.get("tasks", [])
    row["tasks"] = [{k: t.get(k) for k in ("name", "family", "baseline_ms", "best_ms", "speedup",
                                           "validity_rate", "counts")} for t in tasks]
    # The winner's knobs (the lineage ends at the best candidate).
    for summary, t in zip(row["tasks"], tasks):
        lineage = t.get("lineage") or []
        summary["best_knobs"] = lineage[-1].get("knobs") if lineage else None
    row["baseline_ms"] = sum(t.get("baseline_ms") or 0 for t in tasks)
    row["evaluated"] = sum((t.get("counts") or {}).get("evaluated", 0) for t in tasks)
    row["valid"] = sum((t.get("counts") or {}).get("valid", 0) for t in tasks)
    # The evolved module, verified and timed end to end (every task, the scratch in between).
    vjson = os.path.join(work, name + ".verify.json")
    v = subprocess.run([evo, mlir, f"--evo-verify=output={vjson} runs=50"],
                       capture_output=True, text=True)
    try:
        res = json.load(open(vjson))
        fn = res["results"][0]
        row["verify"] = fn["verdict"]
        row["evolved_ms"] = fn.get("timing", {}).get("median_ms")
        row["roofline"] = fn.get("roofline", {})
        row["ceilings"] = res.get("ceilings")
    except Exception:
        row["verify"] = "error"
        row["verify_error"] = v.stderr.strip()[-600:]
    return row


def time_torch(fn, args):
    """Median ms of fn(*args) eager and under torch.compile (triton.testing.do_bench, which flushes
    the L2 like evo's timing). A failing torch.compile is NaN, reported, never hiding the rest."""
    import torch
    from triton.testing import do_bench
    eager = do_bench(lambda: fn(*args), warmup=25, rep=200, return_mode="median")
    try:
        cf = torch.compile(fn)
        cf(*args)
        torch.cuda.synchronize()
        compiled = do_bench(lambda: cf(*args), warmup=25, rep=200, return_mode="median")
    except Exception as e:
        print(f"torch.compile failed: {e}", file=sys.stderr)
        compiled = float("nan")
    return eager, compiled
