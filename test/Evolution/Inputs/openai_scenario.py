"""evo-evolve strategy=full against a local OpenAI-compatible server (test/Evolution/openai.test).

usage: openai_scenario.py EVO_OPT FAKE_WORKER SCRIPTED_LLM INPUT WORK_DIR
The server answers with the scripted LLM's rewrites (valid and faster, subtly wrong, not
parseable, refusals) and injects a 429 with Retry-After, a 500, a malformed body, a truncated
body and an empty reply among them. Prints one line per fact; FileCheck checks them.
"""
import os
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_openai import FakeOpenAI, PROMPT_TOKENS, COMPLETION_TOKENS  # noqa: E402

evo, worker, scripted, source, work = sys.argv[1:6]
os.makedirs(work, exist_ok=True)
run = os.path.join(work, "run")
SECRET = "sk-evo-test-secret-0123456789"
env = dict(os.environ, EVO_TEST_OPENAI_KEY=SECRET)
faults = ["429", None, "500", None, "malformed", None, "truncated", None, "empty"]
# The timeout only has to outlast one run of the scripted LLM (a Python process the server starts
# per request): 20 s was not enough on a 2-core machine saturated by compiles (every attempt
# timed out, the server's writes hit closed sockets). No fault here waits for it.
with FakeOpenAI(scripted, faults) as server:
    r = subprocess.run([evo, source, "--evo-lower-to-gpu",
                        f"--evo-evolve=worker={worker} run-dir={run} "
                        f"max-candidates=8 samples=2 quiet=true strategy=full llm=openai "
                        f"llm-base-url={server.base_url} llm-model=fake-model "
                        f"llm-key-env=EVO_TEST_OPENAI_KEY llm-timeout=120 llm-parallel=2",
                        "-o", os.path.join(work, "out.mlir")], capture_output=True, text=True, env=env)
    print(f"evolve rc={r.returncode}")
    for line in r.stderr.splitlines():
        if "remark: evo-evolve: LLM" in line or "error" in line:
            print(line.split("remark: ", 1)[-1])
    print(f"the key reached the server: {server.authorization == {'Bearer ' + SECRET}}")
    faults_left = [f for f in server.faults if f]
    remark = next((l for l in r.stderr.splitlines() if "remark: evo-evolve: LLM" in l), "")
    cache_hits = int(remark.split(" answered from the cache")[0].rsplit(" ", 1)[-1]) if remark else -1
    print(f"server: {server.requests} requests, {server.answered} answered, "
          f"faults left: {len(faults_left)}")

db = sqlite3.connect(os.path.join(run, "run.sqlite"))
rows = db.execute("select verdict from candidates where op like 'llm-%'").fetchall()
print(f"LLM candidates: {len(rows)}, without a verdict: {sum(1 for (v,) in rows if v == 'pending')}")
calls, pt, ct = db.execute("select sum(llm_calls), sum(prompt_tokens), sum(completion_tokens) "
                           "from candidates").fetchone()
print(f"replies recorded = answered by the server + from the cache: {calls == server.answered + cache_hits}")
print(f"tokens = the server's usage per reply: {pt == calls * PROMPT_TOKENS and ct == calls * COMPLETION_TOKENS}")
secret = any(SECRET.encode() in open(os.path.join(dp, f), "rb").read()
             for dp, _, fs in os.walk(run) for f in fs)
print(f"a key in the run directory: {secret}")
