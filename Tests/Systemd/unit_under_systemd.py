#!/usr/bin/python3
"""systemd/muevald.service as systemd runs it: README's "Deploy on a lab machine", as written, in a
Debian system whose PID 1 is a real systemd (docs/SYSTEMD.md).

    Tests/Systemd/unit_under_systemd.py [--bin DIR] [--timeout SECONDS]

The system is a debootstrap'd tree of the build machine's Debian release with muevald's runtime
libraries (found with ldd and dpkg -S), cached under /var/tmp/mueval-systemd-root/KEY; it boots with
systemd-nspawn on a throwaway overlay, with only loopback. `make install DESTDIR=` of the built
binaries (--bin, default: `swift build --show-bin-path`) is bound into it, the toolchain's Swift
runtime too (the binaries link it). Inside: systemd-sysusers, daemon-reload, enable --now muevald,
usermod -aG mueval alice, muevalctl status as alice; then the unit's promises: Type=notify, the
journal, reload, the watchdog, and its sandbox as the service sees it.

Exit status: 0 when every check passed; 1 with each failed check on stderr ("FAIL: ..."); 0 with
"SKIP: ..." only when this machine cannot run a container at all (not root, no namespaces, no cgroup
hierarchy). A missing tool, an unreachable mirror or a container that does not boot is a failure.
Everything it starts is torn down, also on failure or timeout.
"""

import argparse
import fcntl
import glob
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CACHE = "/var/tmp/mueval-systemd-root"
# Bump to rebuild every cached tree (a changed package list gives a new key by itself).
TREE_VERSION = "1"
# What README's deploy steps and these checks use besides the libraries muevald links:
# the init, D-Bus and Avahi (muevald announces itself through them), ps, and Debian's
# (minbase) login, passwd and util-linux for useradd, usermod, setpriv and nsenter.
BASE_PACKAGES = ["systemd", "systemd-sysv", "dbus", "avahi-daemon", "procps",
                 # transcription is on by default and reads Debian's model (config/muevald.toml)
                 "pocketsphinx-en-us"]
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class Skip(Exception):
    """This machine cannot run a container: not a failure of what is tested."""


class Failure(Exception):
    """A step the rest depends on went wrong."""


def log(message):
    print(message, flush=True)


def run(command, timeout=60, check=True, **kwargs):
    """Runs `command`; its output as text. A non-zero exit raises Failure unless check is False."""
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout, **kwargs)
    if check and result.returncode != 0:
        raise Failure(f"{' '.join(command)} exited with {result.returncode}:\n{result.stdout}{result.stderr}")
    return result


def eventually(what, deadline_seconds, probe, interval=0.05):
    """probe()'s first truthy value within the deadline; Failure naming `what` otherwise."""
    deadline = time.monotonic() + deadline_seconds
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise Failure(f"timed out after {deadline_seconds} s waiting for {what}")
        time.sleep(interval)


# --- What this machine can do -------------------------------------------------------------

def check_machine():
    if os.geteuid() != 0:
        raise Skip("not root: booting a container needs root (make test runs this with sudo)")
    if not os.path.isdir("/sys/fs/cgroup/systemd") and not os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
        raise Skip("no cgroup hierarchy for systemd at /sys/fs/cgroup")
    probe = subprocess.run(["unshare", "--pid", "--mount", "--net", "--uts", "--ipc", "--fork", "true"],
                           capture_output=True, text=True, timeout=20)
    if probe.returncode != 0:
        raise Skip(f"cannot create namespaces: {probe.stderr.strip()}")
    for tool in ("systemd-nspawn", "debootstrap", "nsenter", "ldd", "dpkg", "make"):
        if shutil.which(tool) is None:
            raise Failure(f"{tool} is missing (make test-deps installs systemd-container and debootstrap)")


# --- The Debian tree ----------------------------------------------------------------------

def host_release():
    with open("/etc/os-release") as f:
        fields = dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line)
    return fields.get("VERSION_CODENAME", "").strip('"')


def mirror(release):
    """The host's Debian mirror for `release`, from its apt sources (deb822 or one-line)."""
    for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
        with open(path) as f:
            for stanza in f.read().split("\n\n"):
                fields = dict(re.findall(r"^(\w[\w-]*):\s*(.*)$", stanza, re.M))
                if release in fields.get("Suites", "").split() and "deb" in fields.get("Types", "").split():
                    return fields["URIs"].split()[0]
    for path in ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list")):
        if os.path.exists(path):
            with open(path) as f:
                for line in f:
                    match = re.match(r"^deb\s+(?:\[[^]]*\]\s+)?(\S+)\s+" + re.escape(release) + r"\s", line)
                    if match:
                        return match.group(1)
    raise Failure(f"no apt source for {release} in /etc/apt: debootstrap needs a mirror")


def runtime_needs(binaries):
    """The Debian packages that hold what `binaries` load, and the directories of the libraries no
    package holds (the toolchain's Swift runtime), which the container gets bound read-only."""
    libraries = set()
    for binary in binaries:
        libraries |= set(re.findall(r"=> (/\S+)", run(["ldd", binary]).stdout))
    # usrmerge: dpkg knows a library by the path its package ships, /lib or /usr/lib.
    def aliases(path):
        real = os.path.realpath(path)
        return {path, real} | {re.sub(r"^/usr/lib/", "/lib/", p) for p in (path, real)} | {re.sub(r"^/lib/", "/usr/lib/", p) for p in (path, real)}
    candidates = sorted(set().union(*(aliases(path) for path in libraries)))
    # One dpkg -S for all: it answers "package[:arch][, other]: path" for the paths it knows.
    owners = {}
    for line in run(["dpkg", "-S"] + candidates, check=False).stdout.splitlines():
        if not line.startswith("diversion ") and ": " in line:
            names, path = line.split(": ", 1)
            owners[path] = names.split(",")[0].split(":")[0].strip()
    packages, foreign = set(), set()
    for path in libraries:
        owner = next((owners[a] for a in sorted(aliases(path)) if a in owners), None)
        if owner:
            packages.add(owner)
        else:
            foreign.add(os.path.dirname(os.path.realpath(path)))
    return sorted(packages), sorted(foreign)


def tree(release, packages, cache=CACHE):
    """A cached debootstrap'd tree with `packages`; its path. Holds a shared lock on the cache for
    as long as the process runs, so that no other run prunes it while it is in use. Each test that
    needs other packages has a cache of its own (package_under_systemd.py's has no muevald libraries)."""
    os.makedirs(cache, exist_ok=True)
    key = hashlib.sha256(" ".join([TREE_VERSION, release] + packages).encode()).hexdigest()[:16]
    root = os.path.join(cache, key)
    lock = open(os.path.join(cache, ".lock"), "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    if not os.path.exists(os.path.join(root, ".mueval-tree")):
        source = mirror(release)
        building = root + ".building"
        remove_tree(building)
        log(f"building the Debian {release} tree (once; cached in {root}) from {source}: {' '.join(packages)}")
        started = time.monotonic()
        try:
            result = subprocess.run(["debootstrap", "--variant=minbase", "--include=" + ",".join(packages),
                                     release, building, source], capture_output=True, text=True, timeout=900)
        finally:
            unmount_under(building)  # debootstrap mounts /proc and /sys inside; a killed one leaves them
        if result.returncode != 0:
            remove_tree(building)
            raise Failure(f"debootstrap failed ({result.returncode}):\n{result.stdout[-3000:]}{result.stderr[-3000:]}")
        # The downloaded packages are not needed to boot: a smaller cache.
        for deb in glob.glob(os.path.join(building, "var/cache/apt/archives/*.deb")):
            os.remove(deb)
        with open(os.path.join(building, ".mueval-tree"), "w") as f:
            f.write(f"{TREE_VERSION} {release} {' '.join(packages)}\n")
        os.rename(building, root)
        log(f"tree built in {time.monotonic() - started:.0f} s, {tree_size(root)}")
        # Trees of other keys are stale: a changed package list or TREE_VERSION.
        for other in glob.glob(os.path.join(cache, "*")):
            if other != root and os.path.isdir(other):
                remove_tree(other)
    else:
        log(f"reusing the cached tree {root}")
    fcntl.flock(lock, fcntl.LOCK_SH)
    return root, lock


def mounts_under(path):
    with open("/proc/self/mountinfo") as f:
        points = [line.split()[4] for line in f]
    return [p for p in points if p == path or p.startswith(path.rstrip("/") + "/")]


def unmount_under(path):
    for point in sorted(mounts_under(path), key=len, reverse=True):
        subprocess.run(["umount", "--lazy", point], capture_output=True, timeout=30)


def remove_tree(path):
    """rm -rf that never descends into a mounted /proc or /sys."""
    unmount_under(path)
    if mounts_under(path):
        raise Failure(f"cannot unmount what is mounted under {path}: {mounts_under(path)}")
    shutil.rmtree(path, ignore_errors=True)


def tree_size(root):
    return run(["du", "-sh", root], timeout=120).stdout.split()[0]


# --- The container ------------------------------------------------------------------------

class Container:
    """systemd-nspawn booting `root` on a volatile overlay, in cgroups of its own on the host."""

    def __init__(self, root, binds, log_path):
        self.root = root
        self.binds = binds
        self.name = f"mueval-test-{os.getpid()}"
        self.log_path = log_path
        self.nspawn = None
        self.pid1 = None
        self.cgroups = [d for d in (f"/sys/fs/cgroup/systemd/{self.name}", f"/sys/fs/cgroup/unified/{self.name}")
                        if os.path.isdir(os.path.dirname(d))]

    def boot(self):
        for directory in self.cgroups:
            os.makedirs(directory, exist_ok=True)
        command = ["systemd-nspawn", "--quiet", f"--directory={self.root}", f"--machine={self.name}",
                   "--volatile=overlay", "--private-network", "--system-call-filter=bpf",
                   "--console=pipe", "--register=no", "--keep-unit", "--boot"]
        command += [f"--bind-ro={host}:{inside}" for host, inside in self.binds]
        cgroups = self.cgroups

        def into_cgroups():
            # The host has no systemd to give nspawn a scope: a cgroup of its own, made here.
            for directory in cgroups:
                with open(os.path.join(directory, "cgroup.procs"), "w") as f:
                    f.write(str(os.getpid()))

        self.output = open(self.log_path, "w")
        self.nspawn = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=self.output, stderr=subprocess.STDOUT,
                                       preexec_fn=into_cgroups)

        def systemd_child():
            if self.nspawn.poll() is not None:
                raise Failure(f"systemd-nspawn exited with {self.nspawn.returncode}:\n{self.console()}")
            for pid in children(self.nspawn.pid):
                if comm(pid) == "systemd":
                    return pid
            return None

        self.pid1 = eventually("systemd as the container's PID 1", 20, systemd_child)

    def console(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()[-4000:]

    def run(self, command, timeout=60, check=True, as_user=None):
        """`command` (a shell line) inside, as root or `as_user` with that user's groups."""
        argv = ["nsenter", f"--target={self.pid1}", "--all", "--",
                "env", "-i", f"PATH={PATH}", "LANG=C.UTF-8"]
        if as_user:
            argv += ["setpriv", f"--reuid={as_user}", f"--regid={as_user}", "--init-groups",
                     "env", f"HOME=/home/{as_user}", f"USER={as_user}", f"LOGNAME={as_user}"]
        return run(argv + ["sh", "-c", command], timeout=timeout, check=check)

    def tear_down(self):
        """Powers off (SIGRTMIN+4 to its systemd), then TERM and KILL nspawn if it lingers; removes the
        cgroups. Returns what is left behind, as a list of complaints."""
        left = []
        if self.nspawn is not None and self.nspawn.poll() is None:
            if self.pid1:
                try:
                    os.kill(self.pid1, signal.SIGRTMIN + 4)
                except ProcessLookupError:
                    pass
            for sig, grace in ((None, 15), (signal.SIGTERM, 5), (signal.SIGKILL, 5)):
                if sig is not None:
                    left.append(f"systemd-nspawn did not stop; sent {signal.Signals(sig).name}")
                    self.nspawn.send_signal(sig)
                try:
                    self.nspawn.wait(timeout=grace)
                    break
                except subprocess.TimeoutExpired:
                    continue
        if self.nspawn is not None:
            self.output.close()
        for top in self.cgroups:
            # Depth first: nspawn leaves payload/ and supervisor/ (and systemd's own tree) behind.
            for directory in sorted((d for d, _, _ in os.walk(top)), key=len, reverse=True):
                procs = os.path.join(directory, "cgroup.procs")
                if members(procs):
                    left.append(f"processes remain in {directory}")
                    for pid in members(procs):
                        try:
                            os.kill(pid, signal.SIGKILL)
                        except ProcessLookupError:
                            pass
                try:
                    eventually(f"{directory} to empty", 5, lambda: not members(procs))
                    os.rmdir(directory)
                except (OSError, Failure) as error:
                    left.append(f"cannot remove {directory}: {error}")
        with open("/proc/self/mountinfo") as f:
            mounts = [line for line in f if self.root in line or self.name in line]
        left += [f"mount left: {line.strip()}" for line in mounts]
        return left


def members(procs):
    """The processes in a cgroup, by its cgroup.procs file; none if it is gone."""
    try:
        with open(procs) as f:
            return [int(p) for p in f.read().split()]
    except FileNotFoundError:
        return []


def children(pid):
    found = []
    for task in glob.glob(f"/proc/{pid}/task/*/children"):
        try:
            with open(task) as f:
                found += [int(p) for p in f.read().split()]
        except FileNotFoundError:
            pass
    return found


def comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except FileNotFoundError:
        return None


# --- The checks ---------------------------------------------------------------------------

class Checks:
    """Collects failed checks, so that one run reports every broken promise, not the first."""

    def __init__(self):
        self.failed = []

    def expect(self, condition, what, detail=""):
        if condition:
            log(f"ok    {what}")
        else:
            log(f"FAIL  {what}\n{detail}".rstrip())
            self.failed.append(what)
        return condition


def deploy_and_check(box, checks, timings):
    # README: `make install` (done on the host, bound in read-only at /usr/local; its /etc part
    # copied in, since the administrator edits /etc/mueval/muevald.toml), then as root:
    box.run("cp -a /mnt/mueval-etc/. /etc/ && useradd --create-home alice && useradd --create-home bob")

    box.run("systemd-sysusers")
    user = box.run("getent passwd mueval && getent group mueval", check=False)
    checks.expect(user.returncode == 0 and "/var/lib/mueval" in user.stdout,
                  "systemd-sysusers creates the user and group mueval", user.stdout + user.stderr)
    box.run("systemctl daemon-reload")
    started = time.monotonic()
    enable = box.run("systemctl enable --now muevald", check=False, timeout=90)
    timings["enable --now muevald"] = time.monotonic() - started
    if not checks.expect(enable.returncode == 0, "systemctl enable --now muevald",
                         enable.stdout + enable.stderr + box.run("systemctl status --no-pager muevald; journalctl -u muevald --no-pager | tail -30", check=False).stdout):
        raise Failure("muevald did not start; the other checks need it")
    box.run("usermod -aG mueval alice")

    # README: `muevalctl status` as alice. Her groups come from the user database, as at a login.
    alice = box.run("muevalctl status", as_user="alice", check=False)
    checks.expect(alice.returncode == 0 and "/run/mueval/control.sock" in alice.stdout,
                  "muevalctl status as alice, a member of mueval (README's deploy steps)",
                  f"exit {alice.returncode}\n{alice.stdout}{alice.stderr}")

    # A user outside the group is refused, and told which group to join.
    bob = box.run("muevalctl status", as_user="bob", check=False)
    checks.expect(bob.returncode != 0 and 'group "mueval"' in bob.stderr,
                  "muevalctl status as bob, not in mueval: refused, naming the group",
                  f"exit {bob.returncode}\n{bob.stdout}{bob.stderr}")

    show = properties(box, "Type", "ActiveState", "SubState", "StatusText", "MainPID", "WatchdogUSec",
                      "WatchdogTimestampMonotonic")
    checks.expect(show["Type"] == "notify" and show["ActiveState"] == "active" and show["SubState"] == "running",
                  "the service is active (running) with Type=notify", str(show))
    checks.expect(show["StatusText"].startswith("0 sessions open"), "its STATUS= reaches systemd", str(show))
    pid = show["MainPID"]
    owner = box.run(f"ps -o user= -p {pid}", check=False).stdout.strip()
    checks.expect(owner == "mueval", "muevald runs as the user mueval", f"ps says {owner!r}")

    journal = box.run("journalctl -u muevald --no-pager -o verbose", check=False).stdout
    checks.expect("MESSAGE=muevald" in journal and "starting: data in /var/lib/mueval" in journal
                  and "PRIORITY=5" in journal and "SYSLOG_IDENTIFIER=muevald" in journal,
                  "journalctl -u muevald shows its lines, with priorities", journal[-2000:])
    # LimitNOFILE=8192 reaches muevald, whose budget then clamps none of the default caps (docs/SECURITY.md, "Descriptors").
    checks.expect("open-file limit 8192" in journal and "for connections: devices up to 4096, console up to 512" in journal,
                  "muevald runs with the unit's 8192 open files and its default caps unclamped",
                  "\n".join(line for line in journal.splitlines() if "open-file" in line or "max_connections" in line))

    # systemctl reload: a changed, reloadable setting is applied and the journal says so.
    box.run("sed -i 's/^#level = \"info\"/level = \"debug\"/' /etc/mueval/muevald.toml && grep -q '^level = \"debug\"' /etc/mueval/muevald.toml")
    reload = box.run("systemctl reload muevald", check=False)
    applied = reload.returncode == 0 and eventually_or_none(
        lambda: "reload: applied log.level" in box.run("journalctl -u muevald --no-pager -o cat", check=False).stdout, 10)
    checks.expect(applied and properties(box, "MainPID")["MainPID"] == pid,
                  "systemctl reload muevald applies log.level in the same process",
                  reload.stdout + reload.stderr + box.run("journalctl -u muevald --no-pager -o cat | tail -5", check=False).stdout)

    sandbox(box, checks, pid)

    # Last, as it takes up to half of WatchdogSec: systemd notes each WATCHDOG=1 (and the start).
    pinged = eventually_or_none(lambda: properties(box, "WatchdogTimestampMonotonic")["WatchdogTimestampMonotonic"]
                                != show["WatchdogTimestampMonotonic"], 20)
    checks.expect(show["WatchdogUSec"] == "30s" and pinged, "the watchdog is armed (30 s) and muevald pings it", str(show))


def sandbox(box, checks, pid):
    """The unit's sandbox as muevald sees it: its mount namespace, as its user."""
    inside = f"nsenter --target={pid} --mount --"
    as_service = f"{inside} setpriv --reuid=mueval --regid=mueval --clear-groups"
    mountinfo = box.run(f"cat /proc/{pid}/mountinfo").stdout
    proc = [line for line in mountinfo.splitlines() if line.split()[4] == "/proc"]
    checks.expect(any("hidepid=invisible" in line and "subset=pid" in line for line in proc),
                  "ProtectProc=invisible, ProcSubset=pid: the service's /proc is hidepid=invisible,subset=pid", "\n".join(proc))
    visible = box.run(f"{as_service} ls /proc", check=False).stdout.split()
    checks.expect(pid in visible and "1" not in visible,
                  "the service's /proc shows its own processes and hides root's (PID 1)",
                  f"pid {pid}; /proc holds {' '.join(p for p in visible if p.isdigit())}")

    home = box.run(f"test -d /home/alice && ! {inside} test -e /home/alice", check=False)
    checks.expect(home.returncode == 0, "ProtectHome=yes: /home/alice exists, the service sees none", home.stderr)

    tmp = box.run(f"touch /tmp/mueval-probe && ! {inside} test -e /tmp/mueval-probe", check=False)
    checks.expect(tmp.returncode == 0, "PrivateTmp=yes: the system's /tmp is not the service's", tmp.stderr)

    for path in ("/usr/mueval-probe", "/etc/mueval-probe", "/var/lib/mueval-probe"):
        write = box.run(f"{as_service} touch {path}", check=False)
        checks.expect(write.returncode != 0 and "Read-only file system" in write.stderr,
                      f"ProtectSystem=strict: {path} is on a read-only mount for the service",
                      f"exit {write.returncode}: {write.stderr}")
    # ConfigurationDirectory= exempts /etc/mueval from ProtectSystem=strict; the unit's
    # ReadOnlyPaths= puts it back on a read-only mount.
    config = box.run(f"{as_service} touch /etc/mueval/probe", check=False)
    checks.expect(config.returncode != 0 and "Read-only file system" in config.stderr,
                  "ReadOnlyPaths=/etc/mueval: the service cannot write its configuration", f"exit {config.returncode}: {config.stderr}")
    state = box.run(f"{as_service} sh -c 'touch /var/lib/mueval/.probe && rm /var/lib/mueval/.probe'", check=False)
    checks.expect(state.returncode == 0, "the state directory /var/lib/mueval stays writable for mueval", state.stderr)
    listing = box.run("stat -c '%a %U:%G' /var/lib/mueval /run/mueval /run/mueval/control.sock", check=False).stdout.split("\n")
    checks.expect(listing[:3] == ["700 mueval:mueval", "750 mueval:mueval", "660 mueval:mueval"],
                  "state 0700, runtime 0750, control socket 0660, all mueval:mueval", str(listing))


def properties(box, *names):
    output = box.run("systemctl show muevald " + " ".join(f"-p {n}" for n in names)).stdout
    values = dict(line.split("=", 1) for line in output.splitlines() if "=" in line)
    return {n: values.get(n, "") for n in names}


def eventually_or_none(probe, seconds):
    try:
        return eventually("a condition", seconds, probe, interval=0.1)
    except Failure:
        return None


# --- Main ---------------------------------------------------------------------------------

def bin_path():
    return run(["swift", "build", "--show-bin-path"], cwd=REPOSITORY, timeout=120).stdout.strip()


def wait_for_boot(box, checks):
    """Waits for the container's systemd to finish booting; Failure unless it is "running"."""
    def state():
        # Until its manager answers, systemctl prints nothing or "offline" (its bus is not up yet);
        # then --wait waits for the boot to end.
        answer = box.run("systemctl is-system-running --wait", timeout=60, check=False).stdout.strip()
        return answer if answer not in ("", "offline") else None
    reached = eventually("systemctl to reach the container's systemd", 30, state)
    if not checks.expect(reached == "running", "systemd boots to \"running\"",
                         f"state {reached!r}\n" + box.run("systemctl --failed --no-pager", check=False).stdout):
        raise Failure("the system did not boot cleanly")


def verdict(checks, left, timings, began):
    """Prints what tear-down left, the times and each failed check; the exit status."""
    for problem in left:
        checks.failed.append(problem)
        log(f"FAIL  tear down: {problem}")
    log("times: " + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in timings.items())
        + f"; total {time.monotonic() - began:.1f} s")
    for failure in checks.failed:
        print(f"FAIL: {failure.splitlines()[0]}", file=sys.stderr)
    return 1 if checks.failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", help="where the built muevald and muevalctl are (default: swift build --show-bin-path)")
    parser.add_argument("--timeout", type=int, default=600, help="seconds for everything, the tree's first build included")
    options = parser.parse_args()

    def expired(*_):
        raise Failure(f"the test took more than {options.timeout} s")

    signal.signal(signal.SIGALRM, expired)
    signal.alarm(options.timeout)
    began = time.monotonic()
    timings = {}
    checks = Checks()
    box, stage, lock, left = None, None, None, []
    try:
        check_machine()
        binaries = options.bin or bin_path()
        programs = [os.path.join(binaries, p) for p in ("muevald", "muevalctl")]
        for program in programs:
            if not os.access(program, os.X_OK):
                raise Failure(f"{program} is not built (swift build)")
        release = host_release()
        packages, foreign = runtime_needs(programs)
        packages = sorted(set(packages) | set(BASE_PACKAGES))
        started = time.monotonic()
        root, lock = tree(release, packages)
        timings["tree"] = time.monotonic() - started

        started = time.monotonic()
        stage = tempfile.mkdtemp(prefix="mueval-systemd-stage-", dir="/var/tmp")
        run(["make", "-s", "-C", REPOSITORY, "install", f"DESTDIR={stage}", f"BIN={binaries}"], timeout=120)
        timings["make install DESTDIR="] = time.monotonic() - started

        binds = [(f"{stage}/usr/local", "/usr/local"), (f"{stage}/etc", "/mnt/mueval-etc")]
        binds += [(directory, directory) for directory in foreign]
        log(f"booting {root} with {', '.join(inside for _, inside in binds)} bound read-only")
        box = Container(root, binds, os.path.join(stage, "console.log"))
        started = time.monotonic()
        box.boot()
        wait_for_boot(box, checks)
        timings["boot to running"] = time.monotonic() - started

        started = time.monotonic()
        deploy_and_check(box, checks, timings)
        timings["deploy and checks"] = time.monotonic() - started
    except Skip as reason:
        log(f"SKIP: {reason} -- the unit was NOT tested under systemd")
        return 0
    except (Failure, subprocess.TimeoutExpired) as error:
        checks.failed.append(str(error))
        log(f"FAIL  {error}")
        if box is not None and box.pid1:
            log(box.console())
    finally:
        signal.alarm(0)
        if box is not None:
            started = time.monotonic()
            left = box.tear_down()
            timings["tear down"] = time.monotonic() - started
        if stage is not None:
            shutil.rmtree(stage, ignore_errors=True)
        if lock is not None:
            lock.close()
    return verdict(checks, left, timings, began)


if __name__ == "__main__":
    sys.exit(main())
