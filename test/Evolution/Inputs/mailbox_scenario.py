"""Drives evo-evolve through mailbox pause / answer / resume cycles (test/Evolution/mailbox.test).

usage: mailbox_scenario.py EVO_OPT FAKE_WORKER SCRIPTED_LLM INPUT WORK_DIR
Prints one line per step; FileCheck checks them.
"""
import glob
import os
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_openai import FakeOpenAI  # noqa: E402

evo, worker, scripted, source, work = sys.argv[1:6]
run_dir, mailbox = os.path.join(work, "run"), os.path.join(work, "mb")
# samples=6: one generation of six prompts, one reply of each kind below.
opts = (f"worker={worker} run-dir={run_dir} max-candidates=6 samples=6 quiet=true "
        f"strategy=full llm=mailbox:{mailbox} llm-repairs=0")


def evolve(extra=""):
    r = subprocess.run([evo, source, "--evo-lower-to-gpu", f"--evo-evolve={opts} {extra}",
                        "-o", os.path.join(work, "out.mlir")], capture_output=True, text=True)
    msg = [l for l in r.stderr.splitlines() if "paused" in l or "warning" in l]
    print(f"evolve rc={r.returncode} output={'yes' if os.path.exists(os.path.join(work, 'out.mlir')) else 'no'}")
    for m in msg:
        print("  " + m.split("evo-evolve: ", 1)[-1])


def pending():
    keys = sorted(os.path.basename(p)[:-5] for p in glob.glob(os.path.join(mailbox, "pending", "*.json")))
    return [k for k in keys if not os.path.exists(os.path.join(mailbox, "replies", k + ".md"))]


def verdicts():
    db = sqlite3.connect(os.path.join(run_dir, "run.sqlite"))
    # A valid reply whose kernel is another's (the scripted LLM picks its schedule from a hash of
    # the prompt, so two replies may coincide) is not run: a duplicate, not a rejected reply.
    rows = db.execute("select case when verdict = 'not-run' and reason like 'identical PTX to%' "
                      "then 'duplicate' else verdict end as v, count(*) from candidates "
                      "where op != 'baseline' group by v order by v").fetchall()
    print("verdicts: " + ", ".join(f"{v}={n}" for v, n in rows))
    return db


def good_reply(key):
    prompt = open(os.path.join(mailbox, "pending", key + ".prompt.md")).read()
    for sample in range(64):
        env = dict(os.environ, EVO_LLM_SAMPLE=str(sample))
        out = subprocess.run([scripted], input=prompt, capture_output=True, text=True, env=env).stdout
        if "thought: Lowered with" in out and "Reassociated" not in out and "_fast(" not in out:
            return out
    raise SystemExit("no good reply from the scripted LLM")


def write(key, text):
    with open(os.path.join(mailbox, "replies", key + ".md"), "w") as f:
        f.write(text)


os.makedirs(work, exist_ok=True)
evolve()
keys = pending()
print(f"pending={len(keys)}")
# Answers: one valid kernel, one broken, one missing, one oversized, one not UTF-8, one refusal,
# and one for a key nobody asked.
write(keys[0], good_reply(keys[0]))
write(keys[1], "name: broken\n```mlir\ngpu.module @m { this is not mlir\n```\nthought: oops\n")
write(keys[3], "x" * (2 << 20))
with open(os.path.join(mailbox, "replies", keys[4] + ".md"), "wb") as f:
    f.write(b"name: bad\n\xff\xfe not utf-8\n")
for k in keys[5:]:
    write(k, "I'm sorry, but I cannot help with that.")
write("0" * 64, "a reply for a prompt that was never asked")
db = verdicts()
before = db.execute("select id, eval_order from candidates where verdict != 'pending'").fetchall()

evolve("resume=true")
print(f"pending={len(pending())} missing-is-requeued={pending() == [keys[2]]}")
db = verdicts()
for k, why in db.execute("select substr(llm_key, 1, 8), reason from candidates where op != 'baseline' "
                          "and verdict in ('not-run', 'compile-error') order by id"):
    print(f"  {why[:220]}")
after = dict(db.execute("select id, eval_order from candidates where verdict != 'pending'").fetchall())
print("re-evaluated: " + str(any(after.get(i) != o for i, o in before)))

# The relay answers through a local OpenAI-compatible server; the usage it reports is what the
# run store records for that candidate.
missing = pending()[0]
with FakeOpenAI(scripted) as server:
    r = subprocess.run([evo, "llm-relay", mailbox, "--llm=openai", f"--llm-base-url={server.base_url}",
                        "--llm-model=fake-model", "--llm-key-env=EVO_TEST_NO_KEY"],
                       capture_output=True, text=True)
    print(r.stdout.strip() + f" (server saw {server.requests} request)")
evolve("resume=true")
db = verdicts()
tokens = db.execute("select prompt_tokens, completion_tokens from candidates where llm_key = ?",
                    (missing,)).fetchone()
print(f"tokens recorded for the relayed prompt: {tokens[0]} / {tokens[1]}")

# With llm-repairs=1, a reply that cannot be used after a resume is asked again with its
# diagnostics: the prompt context travels with the stored request.
run_dir, mailbox = os.path.join(work, "run-repair"), os.path.join(work, "mb-repair")
opts = (f"worker={worker} run-dir={run_dir} max-candidates=2 quiet=true "
        f"strategy=full llm=mailbox:{mailbox} llm-repairs=1")
os.remove(os.path.join(work, "out.mlir"))
evolve()
first = pending()
for k in first:
    write(k, "name: broken\n```mlir\ngpu.module @m { this is not mlir\n```\nthought: oops\n")
evolve("resume=true")
repairs = [k for k in pending() if k not in first]
print(f"repair prompts={len(repairs)}")
text = open(os.path.join(mailbox, "pending", repairs[0] + ".prompt.md")).read()
print("repair prompt has diagnostics: " + str("could not be used" in text and "does not parse" in text))
print("repair prompt has the task: " + str("linalg" in text or "softmax" in text))
for k in repairs:
    write(k, good_reply(k))
evolve("resume=true")
verdicts()  # the two repaired replies are the same kernel: one runs, one is 'identical PTX'
