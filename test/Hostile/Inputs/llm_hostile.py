"""Hostile mailboxes, prompts and LLM servers against evo-evolve and evo-opt llm-relay
(test/Hostile/llm-*.test; docs/reliability.md, "LLM servers and mailboxes").

usage: llm_hostile.py CASE EVO_OPT FAKE_WORKER INPUT WORK_DIR
Prints one line per fact; FileCheck checks them. Every command runs under a timeout (a hang is
printed as TIMEOUT, never waited out), and the largest memory any of them used is checked.
"""
import hashlib
import json
import os
import resource
import sqlite3
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llm_hostile_server import HostileServer  # noqa: E402

case, evo, worker, source, work = sys.argv[1:6]
MARKER = b"SECRET-OUTSIDE-MARKER"
SPARSE = 8 << 30


def run(args, timeout=60, env=None):
    start = time.time()
    try:
        r = subprocess.run(args, capture_output=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        print(f"TIMEOUT after {timeout} s: {' '.join(args[:2])}")
        return None
    r.wall = time.time() - start
    return r


def raw_controls(data):
    """Terminal control bytes in output: C0 other than \\n and \\t, DEL, C1 (UTF-8 or raw)."""
    bad = [b for b in data if (b < 0x20 and b not in (0x0a, 0x09)) or b == 0x7f]
    c1 = any(data[i] == 0xC2 and 0x80 <= data[i + 1] <= 0x9F for i in range(len(data) - 1))
    return bool(bad) or c1


def files_with(roots, needle):
    """Regular files under `roots` (links not followed) that contain `needle`."""
    hits = []
    for root in roots:
        for d, _, names in os.walk(root):
            for n in names:
                p = os.path.join(d, n)
                st = os.lstat(p)
                if not os.path.isfile(p) or os.path.islink(p) or st.st_size > (64 << 20):
                    continue
                with open(p, "rb") as f:
                    if needle in f.read():
                        hits.append(os.path.relpath(p, work))
    return sorted(hits)


def max_rss_mib():
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def evolve(run_dir, llm, extra="", timeout=90, env=None):
    opts = (f"worker={worker} run-dir={run_dir} quiet=true strategy=full "
            f"llm={llm} llm-repairs=0 {extra}")
    out = os.path.join(work, "out.mlir")
    if os.path.exists(out):
        os.remove(out)
    return run([evo, source, "--evo-lower-to-gpu", f"--evo-evolve={opts}", "-o", out],
               timeout=timeout, env=env)


def relay(mailbox, server, *extra, timeout=60, env=None):
    return run([evo, "llm-relay", mailbox, "--llm=openai", f"--llm-base-url={server.base_url}",
                "--llm-model=fake-model", "--llm-key-env=EVO_TEST_NO_KEY", "--llm-retries=1",
                *extra], timeout=timeout, env=env)


def pending(mailbox):
    names = os.listdir(os.path.join(mailbox, "pending"))
    keys = sorted(n[:-5] for n in names if n.endswith(".json") and len(n) == 69)
    return [k for k in keys if not os.path.lexists(os.path.join(mailbox, "replies", k + ".md"))]


def lines(data):
    return [l for l in data.decode("utf-8", "replace").splitlines() if l.strip()]


def show(r, prefix=""):
    for l in lines(r.stdout) + lines(r.stderr):
        l = l.split("evo-opt llm-relay: ", 1)[-1].split("evo-evolve: ", 1)[-1]
        print(prefix + l.replace(work, "WORK"))


def key_of(i):
    return hashlib.sha256(str(i).encode()).hexdigest()


def post(mailbox, i, prompt=b"Rewrite this kernel.", side=None):
    """A pending prompt as evo-evolve writes it (key, sidecar, prompt)."""
    k = key_of(i)
    os.makedirs(os.path.join(mailbox, "pending"), exist_ok=True)
    base = os.path.join(mailbox, "pending", k)
    if prompt is not None:
        with open(base + ".prompt.md", "wb") as f:
            f.write(prompt)
    s = {"format": "evo-mailbox/1", "key": k, "system": "sys", "temperature": 1.0,
         "max_tokens": 64, "sample": 0, "task": "t", "strategy": "full", "operator": "x"}
    s.update(side or {})
    with open(base + ".json", "w") as f:
        json.dump(s, f)
    return k


def sparse(path):
    with open(path, "wb") as f:
        f.truncate(SPARSE)


os.makedirs(work, exist_ok=True)
outside = os.path.join(work, "outside")
os.makedirs(outside, exist_ok=True)
secret = os.path.join(outside, "secret.md")
with open(secret, "wb") as f:
    f.write(b"name: stolen\n```mlir\ngpu.module @m {}\n```\nthought: " + MARKER + b"\n")

if case == "mailbox-files":
    # Replies that are links out of the mailbox, a FIFO, /dev/zero, a sparse 8 GiB file and a
    # hard link: each candidate gets a reason, the run neither hangs nor reads any of them.
    mb, rd = os.path.join(work, "mb"), os.path.join(work, "run")
    r = evolve(rd, f"mailbox:{mb}", "max-candidates=6 samples=6")
    print(f"pause rc={r.returncode}")
    keys = pending(mb)
    print(f"pending={len(keys)}")
    rep = lambda k: os.path.join(mb, "replies", k + ".md")  # noqa: E731
    os.symlink(secret, rep(keys[0]))
    os.mkfifo(rep(keys[1]))
    os.symlink("/dev/zero", rep(keys[2]))
    sparse(rep(keys[3]))
    os.link(os.path.join(outside, "secret.md"), rep(keys[4]))
    with open(rep(keys[5]), "w") as f:
        f.write("No code here.")
    with open(os.path.join(mb, "replies", "\x1b]0;pwned\x07.md"), "w") as f:
        f.write("stray")
    r = evolve(rd, f"mailbox:{mb}", "max-candidates=6 samples=6 resume=true", timeout=60)
    if r:
        print(f"resume rc={r.returncode} within 60 s: {r.wall < 60}")
        print(f"raw control characters in the output: {raw_controls(r.stdout + r.stderr)}")
        show(r, "  ")
    db = sqlite3.connect(os.path.join(rd, "run.sqlite"))
    for i, k in enumerate(keys):
        row = db.execute("select verdict, reason from candidates where llm_key = ?", (k,)).fetchone()
        print(f"reply {i}: {row[0]}: {row[1].replace(work, 'WORK')}")
    print(f"files holding the outside secret: {files_with([rd, os.path.join(mb, 'pending')], MARKER)}")
    print(f"largest memory under 1 GiB: {max_rss_mib() < 1024}")

elif case == "relay-files":
    # Pending prompts that are links, FIFOs, floods, or have hostile names and sidecars: the relay
    # skips each with a reason and sends only the good one.
    mb = os.path.join(work, "mb")
    with open(os.path.join(outside, "prompt.md"), "wb") as f:
        f.write(b"Please send " + MARKER)
    k0 = post(mb, 0, prompt=None)
    os.symlink(os.path.join(outside, "prompt.md"), os.path.join(mb, "pending", k0 + ".prompt.md"))
    k1 = post(mb, 1)
    side = os.path.join(mb, "pending", k1 + ".json")
    os.rename(side, os.path.join(outside, "side.json"))
    os.symlink(os.path.join(outside, "side.json"), side)
    k2 = post(mb, 2, prompt=None)
    os.mkfifo(os.path.join(mb, "pending", k2 + ".prompt.md"))
    k3 = post(mb, 3, prompt=None)
    sparse(os.path.join(mb, "pending", k3 + ".prompt.md"))
    post(mb, 4, side={"max_tokens": -1})
    post(mb, 5, side={"key": key_of(99)})
    with open(os.path.join(mb, "pending", "\x1b[31mevil.json"), "w") as f:
        f.write("{}")
    k7 = post(mb, 7)
    with HostileServer(["ok"]) as server:
        r = relay(mb, server, timeout=30)
        if r:
            print(f"relay rc={r.returncode} within 30 s: {r.wall < 30}")
            print(f"raw control characters in the output: {raw_controls(r.stdout + r.stderr)}")
            show(r, "  ")
        print(f"server requests: {server.requests}")
        print(f"the outside secret was sent: {any(MARKER.decode() in b for b in server.bodies)}")
    print(f"replies written: {sorted(os.listdir(os.path.join(mb, 'replies'))) == [k7 + '.md']}")
    print(f"largest memory under 1 GiB: {max_rss_mib() < 1024}")

elif case == "dirs":
    # A mailbox whose replies/ or pending/ is a symbolic link to a directory elsewhere.
    for sub in ("replies", "pending"):
        mb, away = os.path.join(work, f"mb-{sub}"), os.path.join(work, f"away-{sub}")
        os.makedirs(mb)
        os.makedirs(away)
        os.symlink(away, os.path.join(mb, sub))
        r = evolve(os.path.join(work, f"run-{sub}"), f"mailbox:{mb}", "max-candidates=2")
        print(f"evolve with a linked {sub}/: rc={r.returncode}")
        show(r, "  ")
        print(f"  written through the link: {os.listdir(away)}")
    # The relay, on a mailbox whose replies/ links elsewhere.
    mb, away = os.path.join(work, "mb-relay"), os.path.join(work, "away-relay")
    post(mb, 0)
    os.makedirs(away)
    os.symlink(away, os.path.join(mb, "replies"))
    with HostileServer(["ok"]) as server:
        r = relay(mb, server)
        print(f"relay with a linked replies/: rc={r.returncode}, server requests: {server.requests}")
        show(r, "  ")
    print(f"  written through the link: {os.listdir(away)}")
    # Swapped after a pause: replies/ now links to a directory of ready answers elsewhere.
    mb, rd, away = os.path.join(work, "mb-swap"), os.path.join(work, "run-swap"), os.path.join(work, "away-swap")
    r = evolve(rd, f"mailbox:{mb}", "max-candidates=2")
    print(f"pause rc={r.returncode}")
    os.makedirs(away)
    for k in pending(mb):
        with open(os.path.join(away, k + ".md"), "wb") as f:
            f.write(MARKER)
    os.rename(os.path.join(mb, "replies"), os.path.join(work, "old-replies"))
    os.symlink(away, os.path.join(mb, "replies"))
    r = evolve(rd, f"mailbox:{mb}", "max-candidates=2 resume=true")
    print(f"resume with a swapped replies/: rc={r.returncode}")
    show(r, "  ")
    print(f"files holding the outside answers: {files_with([rd], MARKER)}")

elif case == "flood":
    # Bodies of 8 GiB announced, or streamed without end: the call fails at the cap, at once.
    for mode, extra in (("huge-claimed", ()), ("endless", ()), ("ok", ("--llm-max-reply-bytes=100",))):
        mb = os.path.join(work, f"mb-{mode}")
        post(mb, 0)
        with HostileServer([mode]) as server:
            r = relay(mb, server, *extra, timeout=30)
            if r:
                print(f"{mode}: rc={r.returncode} within 30 s: {r.wall < 30}, server requests: {server.requests}")
                show(r, "  ")
    print(f"largest memory under 512 MiB: {max_rss_mib() < 512}")

elif case == "usage":
    # Negative and int64-max token counts: that reply is an error, the sums stay true.
    for mode in ("usage-negative", "usage-max"):
        mb = os.path.join(work, f"mb-{mode}")
        post(mb, 0)
        with HostileServer([mode]) as server:
            r = relay(mb, server, "--llm-max-total-tokens=5000")
            print(f"{mode}: relay rc={r.returncode}")
            show(r, "  ")
        with open(os.path.join(mb, "pending", key_of(0) + ".json")) as f:
            print(f"  usage stored in the sidecar: {'usage' in json.load(f)}")
    rd = os.path.join(work, "run")
    with HostileServer(["usage-negative", "usage-max", "usage-negative"]) as server:
        r = evolve(rd, "openai", f"llm-base-url={server.base_url} llm-model=fake-model "
                   "llm-key-env=EVO_TEST_NO_KEY llm-max-total-tokens=1000 max-candidates=4")
        print(f"evolve rc={r.returncode}, server requests: {server.requests}")
        for l in lines(r.stderr):
            if "LLM (openai" in l:
                print("  " + l.split("evo-evolve: ", 1)[-1].split("|fake-model): ", 1)[-1])
    db = sqlite3.connect(os.path.join(rd, "run.sqlite"))
    tokens = db.execute("select min(prompt_tokens), max(prompt_tokens), min(completion_tokens), "
                        "max(completion_tokens) from candidates").fetchone()
    print(f"stored tokens min/max: {tokens}")
    for (why,) in db.execute("select distinct reason from candidates where reason like '%usage%'"):
        print(f"  reason: {why}")

elif case == "key-echo":
    # A server that repeats the key it got, in an error and in a reply: the key is in no output
    # and no file; the server did get it.
    key = "sk-hostile-" + os.urandom(12).hex()
    env = dict(os.environ, EVO_HOSTILE_KEY=key)
    rd, mb, cache = os.path.join(work, "run"), os.path.join(work, "mb"), os.path.join(work, "cache")
    outputs = b""
    with HostileServer(["echo-key-401", "echo-key-200"]) as server:
        r = evolve(rd, "openai", f"llm-base-url={server.base_url} llm-model=fake-model "
                   "llm-key-env=EVO_HOSTILE_KEY max-candidates=3", env=env)
        outputs += r.stdout + r.stderr
        print(f"evolve rc={r.returncode}, server requests: {server.requests}")
    db = sqlite3.connect(os.path.join(rd, "run.sqlite"))
    reasons = [w for (w,) in db.execute("select reason from candidates where op != 'baseline'")]
    print(f"a stored reason says the key was redacted: {any('Bearer [REDACTED]' in w for w in reasons)}")
    post(mb, 0)
    post(mb, 1)
    with HostileServer(["echo-key-401", "echo-key-200"]) as server:
        args = [evo, "llm-relay", mb, "--llm=openai", f"--llm-base-url={server.base_url}",
                "--llm-model=fake-model", "--llm-key-env=EVO_HOSTILE_KEY", "--llm-parallel=1",
                f"--llm-cache={cache}"]
        r = run(args, env=env)
        outputs += r.stdout + r.stderr
        print(f"relay rc={r.returncode}")
        show(r, "  ")
        print(f"the server got the key: {server.authorization == ['Bearer ' + key] * 2}")
    print(f"the key in any output: {key.encode() in outputs}")
    print(f"files holding the key: {files_with([rd, mb, cache], key.encode())}")
    print(f"files holding [REDACTED]: {len(files_with([rd, mb, cache], b'[REDACTED]')) > 0}")

elif case == "ansi":
    # Escape sequences and C1 controls in server errors, replies, model names and file names are
    # printed and stored made visible, never raw.
    mb = os.path.join(work, "mb")
    post(mb, 0)
    post(mb, 1)
    outputs = b""
    with HostileServer(["ansi-400", "ansi-200"]) as server:
        r = relay(mb, server, "--llm-parallel=1")
        outputs += r.stdout + r.stderr
        print(f"relay rc={r.returncode}")
        show(r, "  ")
    stored = b""
    for d in ("replies", "pending"):
        for n in os.listdir(os.path.join(mb, d)):
            with open(os.path.join(mb, d, n), "rb") as f:
                stored += f.read()
    print(f"raw ESC or C1 in the relay's files: {raw_controls(stored)}")
    rd, mb2 = os.path.join(work, "run"), os.path.join(work, "mb2")
    os.makedirs(os.path.join(mb2, "replies"))
    with open(os.path.join(mb2, "replies", "\x1b[2J\x1b]0;title\x07.md"), "w") as f:
        f.write("x")
    r = evolve(rd, f"mailbox:{mb2}", "max-candidates=2")
    outputs += r.stdout + r.stderr
    print(f"evolve rc={r.returncode}")
    for l in lines(r.stderr):
        if "answers no prompt" in l:
            print("  " + l.split("evo-evolve: ", 1)[-1])
    rd = os.path.join(work, "run-openai")
    with HostileServer(["ansi-500", "ansi-200"]) as server:
        r = evolve(rd, "openai", f"llm-base-url={server.base_url} llm-model=fake-model "
                   "llm-key-env=EVO_TEST_NO_KEY llm-retries=0 max-candidates=3")
        outputs += r.stdout + r.stderr
        print(f"evolve against the server rc={r.returncode}")
    db = sqlite3.connect(os.path.join(rd, "run.sqlite"))
    reasons = [w for (w,) in db.execute("select reason from candidates where op != 'baseline'")]
    visible = any(r"\x1b[31mRED" in w for w in reasons)
    print(f"a stored reason shows the escape made visible: {visible}")
    print(f"raw ESC or C1 in any stored reason: {any(raw_controls(w.encode()) for w in reasons)}")
    print(f"raw control characters in any output: {raw_controls(outputs)}")

elif case == "wait":
    # llm-wait sleeps: the CPU time of a run waiting S seconds for replies hardly grows with S.
    cpu = {}
    for wait in (0, 6):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        r = evolve(os.path.join(work, f"run-{wait}"), f"mailbox:{os.path.join(work, f'mb-{wait}')}",
                   f"max-candidates=2 llm-wait={wait}")
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu[wait] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        print(f"llm-wait={wait}: rc={r.returncode}, waited: {r.wall >= wait}")
    extra = cpu[6] - cpu[0]
    print(f"CPU seconds per waited second under 0.25: {extra / 6 < 0.25} ({extra:.2f} s for 6 s)"
          .split(" (")[0])

else:
    raise SystemExit(f"unknown case {case}")
