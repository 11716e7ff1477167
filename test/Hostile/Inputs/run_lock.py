"""A run-dir is used by one evo-opt at a time (docs/reliability.md, "Runs and workers").

  run_lock.py EVO_OPT FAKE_WORKER INPUT.mlir WORKDIR

Starts a slow run, then a `resume=true` of the same run-dir beside it (must be refused at once,
naming the holder's pid, and change nothing), then kills the first run with SIGKILL: the kernel
drops the lock with the process, so a resume then works and finishes the run.
"""
import os
import signal
import sqlite3
import subprocess
import sys
import time

evo_opt, worker, inp, work = sys.argv[1:5]
run_dir = os.path.join(work, "run")
env = dict(os.environ, EVO_FAKE_WORKER_DELAY_MS="40")
base = ("worker={} run-dir={} max-candidates=30 quiet=true seed=5"
        .format(worker, run_dir))


def cmd(extra=""):
    return [evo_opt, inp, "--evo-lower-to-gpu", "--evo-evolve=" + base + extra,
            "-o", os.path.join(work, "out.mlir")]


def count():
    con = sqlite3.connect("file:%s?mode=ro" % os.path.join(run_dir, "run.sqlite"), uri=True)
    n = con.execute("SELECT count(*) FROM candidates").fetchone()[0]
    con.close()
    return n


first = subprocess.Popen(cmd(), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
deadline = time.time() + 60
while not os.path.exists(os.path.join(run_dir, "run.sqlite")) and time.time() < deadline:
    time.sleep(0.02)
time.sleep(0.5)
print("first run alive:", first.poll() is None)
second = subprocess.run(cmd(" resume=true"), env=env, capture_output=True, text=True, timeout=60)
print("second exit:", second.returncode)
print(second.stderr.strip().splitlines()[0] if second.stderr.strip() else "no diagnostic")
print("holder pid named:", ("pid %d" % first.pid) in second.stderr)
os.kill(first.pid, signal.SIGKILL)
first.wait()
third = subprocess.run(cmd(" resume=true"), env=env, capture_output=True, text=True, timeout=300)
print("resume after kill exit:", third.returncode)
if third.returncode:
    print(third.stderr.strip()[-600:])
con = sqlite3.connect("file:%s?mode=ro" % os.path.join(run_dir, "run.sqlite"), uri=True)
print("tasks:", sorted(con.execute("SELECT name, status FROM tasks").fetchall()))
con.close()
