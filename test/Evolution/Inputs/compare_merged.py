"""Compares an unsharded run store with the merge of its shards (test/Evolution/shards.test).

usage: compare_merged.py UNSHARDED_RUN_DIR MERGED_RUN_DIR
Prints the number of candidates, whether they are the same candidates under the same ids (task,
parents, operator, genome, PTX hash, and the verdict and times of those evaluated), whether each
task has the same winner (the best candidate's PTX) and the same range of evaluation orders, and
which tasks the runs hold. Which of two twins with identical PTX is evaluated and which is
'not-run' depends on the order compiles finish, so the verdicts of those are not compared; the
order verdicts arrive within a task is not either (only each task's range of orders).
"""
import os
import sqlite3
import sys


def load(d):
    db = sqlite3.connect(os.path.join(d, "run.sqlite"))
    cands = db.execute(
        "select id, task, parents, op, knobs, rewrites, ptx_hash, verdict, median_ms, "
        "final_median_ms from candidates order by id").fetchall()
    winners = dict(db.execute(
        "select t.name, c.ptx_hash from tasks t join candidates c on c.id = t.best_id").fetchall())
    orders = {t: (lo, hi) for t, lo, hi in db.execute(
        "select task, min(eval_order), max(eval_order) from candidates group by task")}
    tasks = [r[0] for r in db.execute("select name from tasks order by rowid")]
    return cands, winners, orders, tasks


def same_candidate(a, b):
    if a[:7] != b[:7]:
        return False
    if "not-run" in (a[7], b[7]):
        return True
    return a[7:] == b[7:]


a, wa, oa, ta = load(sys.argv[1])
b, wb, ob, tb = load(sys.argv[2])
print(f"candidates: {len(a)} and {len(b)}")
print("same candidates under the same ids: "
      f"{len(a) == len(b) and all(same_candidate(x, y) for x, y in zip(a, b))}")
print(f"same winners (best PTX per task): {wa == wb}")
print(f"same evaluation order ranges per task: {oa == ob}")
print(f"tasks: {' '.join(ta)} and {' '.join(tb)}")
