"""LLM runs go generation by generation (test/Evolution/llm-generations.test).

usage: llm_generations.py EVO_OPT FAKE_WORKER SCRIPTED_LLM INPUT WORK_DIR
A mailbox run with samples=4 and 16 compile threads pauses with exactly 4 prompts per cycle;
the second cycle's prompts are crossover/mutation prompts showing the first generation's measured
times. The same run in-process with the command backend makes 4 children per generation, each
from parents of earlier generations with their times. Prints one line per fact; FileCheck
checks them.
"""
import glob
import json
import os
import sqlite3
import subprocess
import sys

evo, worker, scripted, source, work = sys.argv[1:6]


def evolve(opts, extra=""):
    r = subprocess.run([evo, source, "--evo-lower-to-gpu", f"--evo-evolve={opts} {extra}",
                        "-o", os.path.join(work, "out.mlir")], capture_output=True, text=True)
    print(f"evolve rc={r.returncode}")
    if r.returncode not in (0, 75):
        print(r.stderr)


def sidecars(mailbox):
    out = {}
    for p in glob.glob(os.path.join(mailbox, "pending", "*.json")):
        with open(p) as f:
            side = json.load(f)
        out[side["key"]] = side
    return out


def medians(db):
    return {i: (g, v, m) for i, g, v, m in
            db.execute("select id, generation, verdict, median_ms from candidates")}


def shows_times(prompt, parents, known):
    """Every parent is measured and valid, from an earlier generation, and its time is in the prompt."""
    for p in parents:
        g, v, m = known[p]
        if v != "valid" or m is None or f"{m:.4f} ms" not in prompt:
            return False
    return True


# --- mailbox: one generation per cycle -----------------------------------------------------
run_dir, mailbox = os.path.join(work, "run"), os.path.join(work, "mb")
opts = (f"worker={worker} run-dir={run_dir} samples=4 max-candidates=8 compile-threads=16 "
        f"quiet=true strategy=full llm=mailbox:{mailbox} llm-repairs=0")
evolve(opts)
first = sidecars(mailbox)
print(f"cycle 1: {len(first)} prompts, operators {sorted(set(s['operator'] for s in first.values()))}")

# Distinct valid kernels: the n-th good rewrite of the scripted LLM for the n-th prompt.
good = 0
for n, key in enumerate(sorted(first)):
    prompt = open(os.path.join(mailbox, "pending", key + ".prompt.md")).read()
    found = 0
    for sample in range(64):
        env = dict(os.environ, EVO_LLM_SAMPLE=str(sample))
        out = subprocess.run([scripted], input=prompt, capture_output=True, text=True,
                             env=env).stdout
        if "thought: Lowered with" in out and "Reassociated" not in out and "_fast(" not in out:
            if found == n:
                with open(os.path.join(mailbox, "replies", key + ".md"), "w") as f:
                    f.write(out)
                good += 1
                break
            found += 1
print(f"answered {good}")

evolve(opts, "resume=true")
db = sqlite3.connect(os.path.join(run_dir, "run.sqlite"))
known = medians(db)
second = {k: s for k, s in sidecars(mailbox).items() if k not in first}
print(f"cycle 2: {len(second)} prompts, operators {sorted(set(s['operator'] for s in second.values()))}")
ok = all(shows_times(open(os.path.join(mailbox, "pending", k + ".prompt.md")).read(),
                     s["parents"], known) and all(known[p][0] < 2 for p in s["parents"])
         for k, s in second.items())
print(f"cycle 2 prompts show generation 1's measured times: {ok}")
valid1 = db.execute("select count(*) from candidates where generation = 1 and verdict = 'valid'"
                    ).fetchone()[0]
print(f"generation 1 valid: {valid1 >= 2}")

# --- in-process, command backend --------------------------------------------------------------
run_dir = os.path.join(work, "run-cmd")
opts = (f"worker={worker} run-dir={run_dir} samples=4 max-candidates=12 compile-threads=16 "
        f"quiet=true strategy=full llm=cmd:{scripted} llm-repairs=1 seed=3")
evolve(opts)
db = sqlite3.connect(os.path.join(run_dir, "run.sqlite"))
known = medians(db)
per_gen = db.execute("select generation, count(*) from candidates where op != 'baseline' "
                     "group by generation order by generation").fetchall()
print("children per generation: " + ", ".join(f"{g}:{n}" for g, n in per_gen))
rows = db.execute("select generation, parents, llm_request from candidates "
                  "where op like 'llm-%'").fetchall()
ok = True
for g, parents, req in rows:
    parents = json.loads(parents)
    prompt = json.loads(req)["prompt"]
    ok &= all(known[p][0] < g for p in parents) and shows_times(prompt, parents, known)
print(f"every child's parents are from earlier generations, their times in its prompt: {ok}")
