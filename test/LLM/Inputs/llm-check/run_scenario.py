"""A mailbox run whose replies are checked with evo-opt llm-check first (test/LLM/llm-check-run.test).

usage: run_scenario.py EVO_OPT FAKE_WORKER INPUTS WORK_DIR
Pauses a real evo-evolve run (the stand-in worker, llm=mailbox:, llm-repairs=1), answers its
prompt with a contract break and shows that what llm-check prints for it is what the run's repair
prompt then carries; the repair prompt, answered through the relay with a good kernel, is checked
too, and the run then takes that kernel. Prints one line per step.
"""
import glob
import json
import os
import sqlite3
import subprocess
import sys

evo, worker, inputs, work = sys.argv[1:5]
run_dir, mailbox = os.path.join(work, "run"), os.path.join(work, "mb")
opts = (f"worker={worker} run-dir={run_dir} max-candidates=1 samples=1 quiet=true "
        f"strategy=free llm=mailbox:{mailbox} llm-repairs=1")
out = os.path.join(work, "out.mlir")


def evolve(extra=""):
    r = subprocess.run([evo, os.path.join(inputs, "relu.mlir"), "--evo-lower-to-gpu",
                        f"--evo-evolve={opts} {extra}", "-o", out], capture_output=True, text=True)
    print(f"evolve rc={r.returncode} output={'yes' if os.path.exists(out) else 'no'}")
    if r.returncode not in (0, 75):
        print(r.stderr)


def check(*args):
    r = subprocess.run([evo, "llm-check", *args], capture_output=True, text=True)
    print(f"llm-check rc={r.returncode}")
    for line in r.stdout.splitlines():
        print("  " + line)
    if r.stderr:
        print("  stderr: " + r.stderr)
    return r.stdout


def prompts():
    return sorted(os.path.basename(p)[:-5] for p in glob.glob(os.path.join(mailbox, "pending", "*.json")))


def unanswered():
    return [k for k in prompts() if not os.path.exists(os.path.join(mailbox, "replies", k + ".md"))]


def reply(key, name):
    with open(os.path.join(inputs, name)) as f, \
            open(os.path.join(mailbox, "replies", key + ".md"), "w") as g:
        g.write(f.read())


def sidecar(key):
    with open(os.path.join(mailbox, "pending", key + ".json")) as f:
        return json.load(f)


os.makedirs(work, exist_ok=True)
evolve()
first = unanswered()
print(f"prompts: {len(first) >= 1}")
pv = sidecar(first[0])["parent_variant"]
launch = pv["launches"][0]
print(f"parent_variant: format {pv['format']}, @{launch['kernel']} grid {launch['grid']} "
      f"block {launch['block']} args {launch['args']}, num_inputs {pv['num_inputs']}, "
      f"{pv['chip']} {pv['features']} O{pv['opt_level']}, gpu.module: {pv['ir'].startswith('gpu.module')}")

reply(first[0], "write-input.md")
printed = check(mailbox)
diagnostics = [l.split(": ", 1)[1] for l in printed.splitlines() if l.startswith(first[0] + ": ")][0]

# The run takes the replies: the break gets a repair prompt with exactly those diagnostics.
evolve("resume=true")
repairs = [k for k in unanswered() if k not in first]
print(f"repair prompts={len(repairs)}")
with open(os.path.join(mailbox, "pending", repairs[0] + ".prompt.md")) as f:
    text = f.read()
print("repair prompt carries llm-check's diagnostics: " +
      str("could not be used:\n\n" + diagnostics + "\n" in text))
print(f"repair sidecar has parent_variant: {sidecar(repairs[0])['parent_variant'] == pv}")

# The relay answers the repair (a command that prints a good reply) and keeps the parent variant
# beside the usage it adds.
r = subprocess.run([evo, "llm-relay", mailbox, f"--llm=cmd:cat {os.path.join(inputs, 'launch.md')}"],
                   capture_output=True, text=True)
print(r.stdout.strip())
side = sidecar(repairs[0])
print(f"relayed sidecar: usage {'usage' in side}, parent_variant kept {side.get('parent_variant') == pv}")
check(os.path.join(mailbox, "replies", repairs[0] + ".md"))
evolve("resume=true")
db = sqlite3.connect(os.path.join(run_dir, "run.sqlite"))
rows = db.execute("select verdict, count(*) from candidates where op != 'baseline' "
                  "group by verdict order by verdict").fetchall()
print("verdicts: " + ", ".join(f"{v}={n}" for v, n in rows))
