"""Lists the candidates of an evo-evolve run store, one line each in id order (test/Evolution/
evolve-scan.mlir): `<task> <family> <op> <verdict> <knobs as canonical JSON>`.

usage: list_candidates.py RUN_DIR
"""
import json
import os
import sqlite3
import sys

db = sqlite3.connect(os.path.join(sys.argv[1], "run.sqlite"))
rows = db.execute("select c.task, t.family, c.op, c.verdict, c.knobs from candidates c "
                  "join tasks t on t.name = c.task order by c.id").fetchall()
for task, family, op, verdict, knobs in rows:
    print(task, family, op, verdict, json.dumps(json.loads(knobs), sort_keys=True))
