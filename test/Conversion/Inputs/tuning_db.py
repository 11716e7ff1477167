"""Edits and reads tuning databases for the tuning-db lit tests.

  tuning_db.py edit IN OUT TASK.KEY=JSON...   set a field of the record made from TASK
                                              (run.task, as evo-opt tuning-template writes it)
  tuning_db.py drop IN OUT TASK...            remove the records of these tasks
  tuning_db.py signatures IN                  one line per record: task family signature
  tuning_db.py knobs IN                       the same with the record's knobs
"""
import json
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def task_of(record):
    return record.get("run", {}).get("task", "")


def main(argv):
    cmd = argv[1]
    if cmd == "signatures":
        db = load(argv[2])
        lines = sorted(f"{task_of(r)} {r['family']} {r['signature']}" for r in db["records"])
        print("\n".join(lines))
        return 0
    if cmd == "knobs":
        db = load(argv[2])
        lines = sorted(f"{task_of(r)} {r['family']} {r['signature']} "
                       f"{json.dumps(r['knobs'], sort_keys=True)}" for r in db["records"])
        print("\n".join(lines))
        return 0
    db = load(argv[2])
    out = argv[3]
    if cmd == "edit":
        for edit in argv[4:]:
            target, value = edit.split("=", 1)
            task, key = target.split(".", 1)
            hits = [r for r in db["records"] if task_of(r) == task]
            if not hits:
                sys.exit(f"no record for task {task}")
            for r in hits:
                r[key] = json.loads(value)
    elif cmd == "drop":
        db["records"] = [r for r in db["records"] if task_of(r) not in argv[4:]]
    else:
        sys.exit(f"unknown command {cmd}")
    with open(out, "w") as f:
        json.dump(db, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
