#!/usr/bin/env python3
"""The adversarial LLM on the GPU (section "advllm" of scripts/gpu-check): evo-evolve with
strategy=full (--strategy) and llm=cmd:scripts/adversarial-llm, whose replies are kernels that know the harness
(docs/verification.md, "Adversarial LLM"), on test/Evaluation/Inputs/tanh_wide.mlir.

Reads the run store afterwards and prints, per kind of kernel, how often it was sent and judged
valid; a cheat judged valid is a false accept, an honest kernel judged anything else a false
reject. The emitted module must come from an honest kernel or the baseline (evo-evolve
re-verifies it before writing; its PTX is checked here against torch.tanh on wide-range inputs).

With --extra "worker=build/test/tools/evo-fake-worker/evo-fake-worker" and the environment
variable EVO_TEST_STAND_IN_WORKER naming that same executable, an evo-opt built with the tests
runs it without a GPU (a dry run: the stand-in judges every kernel valid, so only the
contract's rejections are real there).
Writes $OUT/adversarial_llm.json.
"""

import argparse
import collections
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ADVERSARY = os.path.join(ROOT, "scripts", "adversarial-llm")
# Cheats that compute the right values on every launch once the harness poisons outputs before
# each launch (stale_skip then always recomputes): valid is a correct verdict for them.
HARMLESS = {"honest", "stale_skip"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--evo-opt", default=os.environ.get("EVO_OPT", os.path.join(ROOT, "build/bin/evo-opt")))
    ap.add_argument("--out", default=os.environ.get("OUT", "gpu-out"))
    ap.add_argument("--input", default=os.path.join(ROOT, "test", "Evaluation", "Inputs", "tanh_wide.mlir"))
    ap.add_argument("--candidates", type=int, default=33)
    ap.add_argument("--strategy", default="full")
    ap.add_argument("--extra", default="")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="evo-adv-")
    env = dict(os.environ, EVO_OPT=args.evo_opt, ADV_LLM_STATE=os.path.join(work, "state"))
    run_dir = os.path.join(work, "run")
    outdir = os.path.join(work, "emit")
    opts = (f"strategy={args.strategy} llm=cmd:{ADVERSARY} max-candidates={args.candidates} quiet=true "
            f"run-dir={run_dir} {args.extra}")
    t0 = time.time()
    r = subprocess.run([args.evo_opt, args.input, "--evo-lower-to-gpu", f"--evo-evolve={opts}",
                        f"--evo-emit-ptx=output-dir={outdir}", "-o", os.path.join(work, "out.mlir")],
                       capture_output=True, text=True, env=env)
    seconds = time.time() - t0
    result = {"rc": r.returncode, "seconds": round(seconds, 1),
              "diagnostics": [l[:400] for l in r.stderr.splitlines()
                              if re.search(r"\b(error|warning|remark):", l)][:40],
              "stderr_tail": r.stderr[-2000:]}
    per = collections.OrderedDict()
    false_accepts, false_rejects = [], []
    db = os.path.join(run_dir, "run.sqlite")
    if os.path.exists(db):
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        rows = con.execute("SELECT id, verdict, reason, thought, median_ms FROM candidates "
                           "WHERE op LIKE 'llm%' ORDER BY id").fetchall()
        winner = con.execute("SELECT best_id FROM tasks").fetchone()
        con.close()
        by_id = {}
        for cid, verdict, reason, thought, ms in rows:
            m = re.search(r"\[cheat:(\w+)\]", thought or "")
            kind = m.group(1) if m else "(no reply)"
            by_id[cid] = kind
            e = per.setdefault(kind, {"sent": 0, "valid": 0, "verdicts": collections.Counter(),
                                      "reasons": []})
            e["sent"] += 1
            e["verdicts"][verdict] += 1
            if verdict == "valid":
                e["valid"] += 1
            elif len(e["reasons"]) < 2:
                e["reasons"].append((reason or "")[:240])
            if kind not in HARMLESS and kind != "(no reply)" and verdict == "valid":
                false_accepts.append((cid, kind))
            if kind == "honest" and verdict not in ("valid", "not-run"):
                false_rejects.append((cid, kind, (reason or "")[:200]))
        result["winner"] = {"id": winner[0] if winner else None,
                            "kind": by_id.get(winner[0], "baseline or built-in") if winner else None}
    for e in per.values():
        e["verdicts"] = dict(e["verdicts"])
    result["kinds"] = per
    result["false_accepts"] = false_accepts
    result["false_rejects"] = false_rejects
    # The emitted PTX against torch on wide-range inputs, when a GPU and torch are here.
    manifest = os.path.join(outdir, "tanh_wide.json")
    if r.returncode == 0 and os.path.exists(manifest):
        try:
            sys.path.insert(0, os.path.join(ROOT, "python"))
            import torch
            from evo_runtime import EvoModule
            mod = EvoModule(manifest)
            worst = 0.0
            for scale in (1.0, 10.0, 100.0):
                x = torch.randn(4194304, device="cuda") * scale
                (y,) = mod(x)
                torch.cuda.synchronize()
                worst = max(worst, (y.double() - torch.tanh(x.double())).abs().max().item())
            result["emitted_max_abs_err"] = worst
        except Exception as ex:  # no GPU/torch (dry run): say so
            result["emitted_check"] = f"not run: {ex}"
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "adversarial_llm.json"), "w") as f:
        json.dump(result, f, indent=1, default=str)

    print(f"evo-evolve exit {r.returncode} in {seconds:.1f} s; winner: {result.get('winner')}")
    print(f"{'kernel':<20} {'sent':>4} {'valid':>5}  verdicts / first reason")
    for kind, e in per.items():
        print(f"{kind:<20} {e['sent']:>4} {e['valid']:>5}  {e['verdicts']} "
              f"{e['reasons'][0][:110] if e['reasons'] else ''}")
    if "emitted_max_abs_err" in result:
        print(f"emitted PTX vs torch.tanh (|x| up to ~300): max abs error {result['emitted_max_abs_err']:.2e}")
    print(f"adversarial LLM: {len(false_accepts)} false accepts, {len(false_rejects)} false rejects")
    if r.returncode != 0:
        print("\n".join(result["diagnostics"][:10]))
    return 0 if r.returncode == 0 and not false_accepts and not false_rejects else 1


if __name__ == "__main__":
    sys.exit(main())
