"""A private single-node Slurm cluster for a test (test/Slurm).

usage: slurm_cluster.py WORK_DIR [--timeout SECONDS] -- COMMAND...

Starts munged (a freshly generated key), slurmctld and slurmd as root, configured in a temporary
directory of their own (slurm.conf naming this host, free TCP ports, private state, spool, logs
and munge socket: nothing of the host's Slurm or munge is used or touched), runs COMMAND with
SLURM_CONF pointing at that cluster, waits until every job it submitted has ended, prints one
line per job ("job NAME ARRAY_INDEX STATE EXIT_CODE", sorted) and stops the daemons it started.

Exit status: COMMAND's when it fails; 1 when a job did not end COMPLETED or the jobs outlive the
timeout; 77, after a line "evo-slurm-cluster: UNSUPPORTED: <why>" on stderr, when the cluster cannot run
here (a daemon that does not start or a node that does not come up, with the end of its log):
test/Slurm/lit.local.cfg reports that as UNSUPPORTED with the reason.
"""
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SBIN = ["/usr/sbin", "/usr/bin", "/sbin"]
UNSUPPORTED = 77


def find(name):
    for d in SBIN + os.environ.get("PATH", "").split(os.pathsep):
        p = os.path.join(d, name)
        if os.access(p, os.X_OK):
            return p
    return None


class Unsupported(Exception):
    pass


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tail(path, n=15):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError as e:
        return f"({path}: {e})"


def wait_for(check, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.2)
    return False


class Cluster:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="evo-slurm-")  # short: sockets live here
        os.chmod(self.dir, 0o755)
        self.pidfiles = []
        self.env = dict(os.environ)

    def run(self, args, timeout=60):
        try:
            return subprocess.run(args, env=self.env, capture_output=True, text=True,
                                  timeout=timeout)
        except subprocess.TimeoutExpired as e:
            raise Unsupported(f"{' '.join(args)} did not return in {timeout} s") from e

    def start(self):
        d = self.dir
        for tool in ["munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "sinfo"]:
            if not find(tool):
                raise Unsupported(f"{tool} not found (Debian: apt-get install slurm-wlm munge)")
        # munge: a key of our own, a socket of our own.
        mdir = os.path.join(d, "munge")
        os.mkdir(mdir, 0o755)
        key = os.path.join(mdir, "munge.key")
        with open(os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400), "wb") as f:
            f.write(os.urandom(1024))
        self.socket = os.path.join(mdir, "munge.socket")
        pid = os.path.join(mdir, "munged.pid")
        self.pidfiles.append(pid)
        r = self.run([find("munged"), "--force", f"--socket={self.socket}", f"--key-file={key}",
                      f"--log-file={mdir}/munged.log", f"--pid-file={pid}",
                      f"--seed-file={mdir}/munged.seed"])
        if r.returncode != 0 or not wait_for(lambda: os.path.exists(self.socket), 10):
            raise Unsupported("munged did not start: " + r.stderr.strip() + "\n" +
                              tail(f"{mdir}/munged.log"))
        # slurm.conf: this host as the controller and the one node (its hardware as slurmd -C
        # sees it), reached over the loopback; no cgroups, no accounting.
        host = socket.gethostname().split(".")[0]
        probe = self.run([find("slurmd"), "-C"])
        node = next((l for l in probe.stdout.splitlines() if l.startswith("NodeName=")), "")
        if not node:
            raise Unsupported("slurmd -C does not describe this host: " +
                              (probe.stderr or probe.stdout).strip())
        node = " ".join(w for w in node.split() if not w.startswith("NodeName="))
        for sub in ["state", "spool"]:
            os.mkdir(os.path.join(d, sub), 0o755)
        conf = f"""ClusterName=evotest
SlurmctldHost={host}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={self.socket}
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
MinJobAge=600
MailProg=/bin/true
SlurmctldDebug=info
SlurmdDebug=info
NodeName={host} NodeAddr=127.0.0.1 {node} State=UNKNOWN
PartitionName=evotest Nodes={host} Default=YES MaxTime=INFINITE State=UP
"""
        self.conf = os.path.join(d, "slurm.conf")
        with open(self.conf, "w") as f:
            f.write(conf)
        self.env["SLURM_CONF"] = self.conf
        for var in list(self.env):  # an enclosing job's variables would leak into sbatch
            if var.startswith("SLURM_") and var != "SLURM_CONF":
                del self.env[var]
        self.pidfiles[:0] = [f"{d}/slurmd.pid", f"{d}/slurmctld.pid"]
        r = self.run([find("slurmctld"), "-f", self.conf, "-i"])
        up = lambda: "UP" in self.run([find("scontrol"), "ping"]).stdout
        if r.returncode != 0 or not wait_for(up, 20):
            raise Unsupported("slurmctld did not start: " + r.stderr.strip() + "\n" +
                              tail(f"{d}/slurmctld.log"))
        r = self.run([find("slurmd"), "-f", self.conf])
        idle = lambda: self.run([find("sinfo"), "-h", "-o", "%T"]).stdout.strip() in ("idle",
                                                                                        "mixed")
        if r.returncode != 0 or not wait_for(idle, 30):
            state = self.run([find("sinfo"), "-h", "-o", "%T %E"]).stdout.strip()
            raise Unsupported(f"slurmd did not start or its node is not usable (node: {state}): " +
                              r.stderr.strip() + "\n" + tail(f"{d}/slurmd.log"))

    def jobs(self):
        r = self.run([find("scontrol"), "-o", "show", "job"])
        jobs = []
        for line in r.stdout.splitlines():
            f = dict(w.split("=", 1) for w in line.split() if "=" in w)
            if "JobId" in f:
                jobs.append(f)
        return jobs

    def wait_for_jobs(self, seconds):
        ended = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY",
                 "BOOT_FAIL", "DEADLINE", "PREEMPTED")
        return wait_for(lambda: all(j.get("JobState") in ended for j in self.jobs()),
                        seconds)

    def stop(self):
        if getattr(self, "conf", None) and find("scancel"):
            try:
                self.run([find("scancel"), "--partition=evotest"], 20)  # left by a failure
            except Unsupported:
                pass
        pids = []
        for pidfile in self.pidfiles:
            try:
                with open(pidfile) as f:
                    pid = int(f.read().strip())
                os.kill(pid, signal.SIGTERM)
                pids.append(pid)
            except (OSError, ValueError):
                pass
        # Our daemons only, by their pids; wait until they are gone before removing their files.
        def gone():
            for pid in pids:
                try:
                    os.kill(pid, 0)
                    return False
                except OSError:
                    pass
            return True
        if not wait_for(gone, 15):
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        shutil.rmtree(self.dir, ignore_errors=True)


def main():
    args = sys.argv[1:]
    if "--" not in args:
        print(__doc__, file=sys.stderr)
        return 2
    own, command = args[:args.index("--")], args[args.index("--") + 1:]
    work, timeout = own[0], 300.0
    if "--timeout" in own:
        timeout = float(own[own.index("--timeout") + 1])
    os.makedirs(work, exist_ok=True)
    if os.geteuid() != 0:
        print("evo-slurm-cluster: UNSUPPORTED: slurmd runs jobs as root; not root here",
              file=sys.stderr, flush=True)
        return UNSUPPORTED
    cluster = Cluster()
    try:
        try:
            cluster.start()
        except Unsupported as e:
            # stderr: lit shows it (stdout may go to FileCheck).
            print(f"evo-slurm-cluster: UNSUPPORTED: {e}", file=sys.stderr, flush=True)
            return UNSUPPORTED
        r = subprocess.run(command, env=cluster.env, cwd=work)
        if r.returncode != 0:
            return r.returncode
        ok = cluster.wait_for_jobs(timeout)
        jobs = cluster.jobs()
        def order(j):
            index = j.get("ArrayTaskId", "")
            return (j.get("JobName", ""), int(index) if index.isdigit() else -1)
        for j in sorted(jobs, key=order):
            print(f"job {j.get('JobName')} {j.get('ArrayTaskId', '-')} {j.get('JobState')} "
                  f"{j.get('ExitCode')}")
        if not ok:
            print(f"evo-slurm-cluster: jobs still running after {timeout:.0f} s", flush=True)
        if not ok or any(j.get("JobState") != "COMPLETED" for j in jobs):
            print("slurmctld.log:\n" + tail(os.path.join(cluster.dir, "slurmctld.log"), 30))
            return 1
        return 0
    finally:
        cluster.stop()


if __name__ == "__main__":
    sys.exit(main())
