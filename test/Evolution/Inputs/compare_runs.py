"""Compares two evo-evolve run stores candidate by candidate (test/Evolution/replay.test).

usage: compare_runs.py OLD_RUN_DIR NEW_RUN_DIR
Prints the number of candidates, whether each has the same operator, parents, PTX hash and
(without PTX) the same verdict in both, which operator made the first run's winner, and the LLM
calls each run's candidates record.
"""
import os
import sqlite3
import sys


def load(d):
    db = sqlite3.connect(os.path.join(d, "run.sqlite"))
    rows = db.execute("select id, op, parents, ptx_hash, verdict, llm_calls from candidates "
                      "order by id").fetchall()
    best = db.execute("select c.op from tasks t join candidates c on c.id = t.best_id").fetchall()
    return rows, [b[0] for b in best]


old, old_best = load(sys.argv[1])
new, new_best = load(sys.argv[2])
same = len(old) == len(new) and all(
    o[1] == n[1] and o[2] == n[2] and o[3] == n[3] and (o[3] or o[4] == n[4])
    for o, n in zip(old, new))
print(f"candidates: {len(old)} and {len(new)}")
print(f"same operators, parents and PTX: {same}")
llm = sum(1 for o in old if o[1].startswith("llm-"))
print(f"LLM and built-in candidates: {0 < llm < len(old) - 1}")
print(f"LLM replies recorded: {sum(o[5] for o in old)} and {sum(n[5] for n in new)}")
print(f"winners: {old_best} and {new_best}")
