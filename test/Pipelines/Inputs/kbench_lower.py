#!/usr/bin/env python3
"""Lowers every bench/kernelbench/*.mlir that is expected to lower (all but the `lower:` lines of
its EXPECTED_FAILURES) with --evo-pipeline to PTX, and checks each result: the manifest lists the
function and its kernels, every kernel is a `.entry` of the PTX, and ptxas assembles the PTX for
the chip. Files of EXPECTED_FAILURES that lower now are noted (their line can go), never failed:
the missing support lands elsewhere.

  kbench_lower.py EVO_OPT PTXAS SUITE_DIR WORK_DIR
"""

import concurrent.futures
import json
import os
import re
import subprocess
import sys

evo, ptxas, suite, work = sys.argv[1:5]
CHIP = "sm_90a"


def expected_failures():
    out = {}
    for line in open(os.path.join(suite, "EXPECTED_FAILURES")):
        m = re.match(r"\s*([\w]+)\s+(lower|oracle):\s*(.*)", line)
        if m and not line.lstrip().startswith("#"):
            out[m.group(1)] = (m.group(2), m.group(3).strip())
    return out


def lower(name):
    """None if the file lowers and its PTX checks out, else what went wrong."""
    out = os.path.join(work, name)
    r = subprocess.run([evo, os.path.join(suite, name + ".mlir"),
                        f"--evo-pipeline=output-dir={out} chip={CHIP} ptxas=none", "-o", os.devnull],
                       capture_output=True, text=True)
    if r.returncode:
        lines = [l for l in r.stderr.splitlines() if "error:" in l] or r.stderr.splitlines() or ["?"]
        return "does not lower: " + lines[0]
    manifest = json.load(open(os.path.join(out, name + ".json")))
    ptx = open(os.path.join(out, name + ".ptx")).read()
    kernels = [k["name"] for k in manifest.get("kernels", [])]
    if manifest.get("function") != name or not kernels or not manifest.get("launches"):
        return "manifest without the function, its kernels or launches"
    missing = [k for k in kernels if not re.search(rf"\.entry {re.escape(k)}\(", ptx)]
    if missing:
        return "kernels not in the PTX: " + ", ".join(missing)
    r = subprocess.run([ptxas, f"-arch={CHIP}", os.path.join(out, name + ".ptx"), "-o",
                        os.path.join(out, name + ".cubin")], capture_output=True, text=True)
    if r.returncode:
        return "ptxas: " + r.stderr.strip()[:300]
    return None


def main():
    names = sorted(f[:-5] for f in os.listdir(suite) if f.endswith(".mlir"))
    expected = expected_failures()
    unknown = sorted(set(expected) - set(names))
    with concurrent.futures.ThreadPoolExecutor(max(2, os.cpu_count() or 2)) as pool:
        results = dict(zip(names, pool.map(lower, names)))
    failed = 0
    for name in names:
        why = results[name]
        stage = expected.get(name, (None,))[0]
        if stage == "lower":
            if why is None:
                print(f"note: {name} lowers now: remove it from EXPECTED_FAILURES")
            elif expected[name][1] not in why:
                print(f"note: {name} fails otherwise than listed: {why}")
            continue
        if why is not None:
            failed += 1
            print(f"FAIL: {name}: {why}")
    lowered = sum(1 for n in names if results[n] is None)
    print(f"kbench-lower: {len(names)} files, {lowered} lowered and assembled for {CHIP}, "
          f"{failed} unexpected failures, {len(unknown)} unknown names in EXPECTED_FAILURES")
    for n in unknown:
        print(f"FAIL: EXPECTED_FAILURES names {n}, which is not a file of the suite")
    return 1 if failed or unknown else 0


if __name__ == "__main__":
    sys.exit(main())
