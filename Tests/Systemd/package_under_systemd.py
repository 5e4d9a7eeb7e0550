#!/usr/bin/python3
"""The Debian package where it will run: `apt install ./mueval_….deb` in a fresh Debian system with
no Swift toolchain, booted with systemd, then README's deploy section, an upgrade and a purge
(docs/PACKAGING.md).

    Tests/Systemd/package_under_systemd.py [--debs DIR] [--timeout SECONDS]

DIR (default: the repository) holds mueval_VERSION_ARCH.deb and mueval-tools_VERSION_ARCH.deb
(`make deb`; the newest of each is tested). The system is a debootstrap'd minbase tree with systemd
and D-Bus only, cached under /var/tmp/mueval-package-root/KEY; what the packages need besides
(their Depends and Recommends: the libraries, avahi-daemon, PocketSphinx's model) is downloaded on
the host, with the tree's dpkg status, into a local apt repository that the container, which has
only loopback, installs from. The container and its checks are unit_under_systemd.py's.

Exit status as unit_under_systemd.py's: 0 when every check passed, 1 with each failed check on
stderr, 0 with "SKIP: ..." only when this machine cannot run a container at all.
"""

import argparse
import glob
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from unit_under_systemd import (REPOSITORY, Checks, Container, Failure, Skip, check_machine,  # noqa: E402
                                eventually_or_none, host_release, log, properties, run, tree, verdict,
                                wait_for_boot)

CACHE = "/var/tmp/mueval-package-root"
# The init and what these checks use; apt is in minbase. Nothing of muevald's: apt brings it.
BASE_PACKAGES = ["systemd", "systemd-sysv", "dbus", "procps"]
# The session the simulated phone records: its events survive a restart, an upgrade and a purge.
SESSION = "package-test"


def newest(directory, package):
    debs = glob.glob(os.path.join(directory, f"{package}_*.deb"))
    if not debs:
        raise Failure(f"no {package}_*.deb in {directory} (make deb)")
    return max(debs, key=os.path.getmtime)


def field(deb, name):
    return run(["dpkg-deb", "--field", deb, name]).stdout.strip()


def next_build(deb, directory):
    """`deb` as the next build would be: the same files, the version one step up (VERSION+1)."""
    unpacked = os.path.join(directory, "unpacked")
    run(["dpkg-deb", "--raw-extract", deb, unpacked])
    control = os.path.join(unpacked, "DEBIAN", "control")
    with open(control) as f:
        text = f.read()
    version = field(deb, "Version") + "+1"
    with open(control, "w") as f:
        f.write(re.sub(r"^Version: .*$", f"Version: {version}", text, flags=re.M))
    built = os.path.join(directory, f"{field(deb, 'Package')}_{version}_{field(deb, 'Architecture')}.deb")
    # Fast compression: it only crosses into the container.
    run(["dpkg-deb", "--root-owner-group", "-Zgzip", "-z1", "--build", unpacked, built], timeout=300)
    shutil.rmtree(unpacked)
    return built


def local_repository(root, debs, directory):
    """What apt needs to install `debs` into `root` besides what it has, as a flat apt repository in
    `directory`: the host's apt (same release, its lists) asked with the tree's dpkg status. The
    downloads are kept in the tree cache, so that a second run fetches nothing."""
    archives = os.path.join(os.path.dirname(root), "archives")
    os.makedirs(os.path.join(archives, "partial"), exist_ok=True)
    options = ["-o", f"Dir::State::status={root}/var/lib/dpkg/status", "-o", f"Dir::Cache::archives={archives}",
               "-o", "Debug::NoLocking=1", "-o", "APT::Install-Recommends=true", "-q", "-y"]
    run(["apt-get", "update", "-qq"], timeout=300)
    run(["apt-get", "install", "--download-only"] + options + debs, timeout=600)
    # The archive cache holds older downloads too: the repository gets what this run installs, as
    # apt's simulation lists it ("Inst NAME (VERSION … [ARCH])"), the packages under test aside.
    plan = run(["apt-get", "install", "--simulate"] + options + debs).stdout
    local = {field(deb, "Package") for deb in debs}
    names = [f"{name}_{version.replace(':', '%3a')}_{arch}.deb"
             for name, version, arch in re.findall(r"^Inst (\S+) (?:\[\S+\] )?\((\S+) .*\[(\S+)\]\)", plan, re.M)
             if name not in local]
    os.makedirs(directory, exist_ok=True)
    for name in names:
        shutil.copy(os.path.join(archives, name), directory)
    with open(os.path.join(directory, "Packages"), "w") as f:
        subprocess.run(["dpkg-scanpackages", "--multiversion", "."], cwd=directory, stdout=f,
                       stderr=subprocess.DEVNULL, check=True, timeout=300)
    return names


def apt(box, arguments, timeout=300, environment=""):
    """apt as an administrator types it, in /root where the .deb files are."""
    return box.run(f"cd /root && {environment} DEBIAN_FRONTEND=noninteractive apt-get -y {arguments}",
                   timeout=timeout, check=False)


def sessions(box):
    """The recorded sessions as `muevalctl sessions` lists them (as alice), by id; with their events."""
    listing = box.run("muevalctl --json sessions", as_user="alice", check=False)
    if listing.returncode != 0:
        return None
    return {s["id"]: s for s in json.loads(listing.stdout)}


def deploy_and_check(box, checks, timings, deb, tools, upgrade):
    box.run("useradd --create-home alice")

    # README: sudo apt install ./mueval_VERSION_ARCH.deb. Its scripts make the user, enable and start.
    started = time.monotonic()
    install = apt(box, f"install ./{os.path.basename(deb)}")
    timings["apt install ./mueval…deb"] = time.monotonic() - started
    if not checks.expect(install.returncode == 0, f"apt install ./{os.path.basename(deb)}", install.stdout[-3000:] + install.stderr):
        raise Failure("the package did not install; the other checks need it")
    checks.expect(box.run("test ! -e /opt/swift && ! ls /usr/lib/swift 2>/dev/null", check=False).returncode == 0,
                  "no Swift toolchain or runtime on the system")
    recommends = box.run("dpkg-query -W -f='${Status}\\n' avahi-daemon pocketsphinx-en-us", check=False).stdout
    checks.expect(recommends.count("install ok installed") == 2, "apt installed its Recommends: avahi-daemon, pocketsphinx-en-us", recommends)

    show = properties(box, "Type", "ActiveState", "SubState", "UnitFileState", "FragmentPath", "MainPID", "WatchdogUSec",
                      "WatchdogTimestampMonotonic", "StatusText")
    checks.expect(show["Type"] == "notify" and show["ActiveState"] == "active" and show["SubState"] == "running"
                  and show["UnitFileState"] == "enabled" and show["StatusText"].startswith("0 sessions open"),
                  "after apt install: enabled, active (running), Type=notify, its STATUS= in systemd", str(show))
    # systemd names it by its first search path, /lib/systemd/system: on merged /usr the same directory.
    unit = box.run(f"dpkg -S /usr/lib/systemd/system/muevald.service && realpath {show['FragmentPath']}", check=False).stdout
    checks.expect(unit.startswith("mueval: ") and unit.endswith("/usr/lib/systemd/system/muevald.service\n"),
                  "the unit is the package's /usr/lib/systemd/system/muevald.service", unit + str(show))
    owner = box.run(f"ps -o user= -p {show['MainPID']}", check=False).stdout.strip()
    checks.expect(owner == "mueval", "muevald runs as the system user mueval (systemd-sysusers)", f"ps says {owner!r}")
    linked = box.run("ldd /usr/bin/muevald /usr/bin/muevalctl", check=False).stdout
    checks.expect("swift" not in linked.lower() and "not found" not in linked,
                  "muevald and muevalctl load only Debian's libraries (ldd)", linked)

    manuals = box.run("ls /usr/share/man/man8/muevald.8.gz /usr/share/man/man1/muevalctl.1.gz /usr/share/man/man5/muevald.toml.5.gz"
                      " && zcat /usr/share/man/man5/muevald.toml.5.gz | grep -c '^\\\\fB[a-z_]*\\\\fR = '"
                      " && muevald --configuration-reference | grep -c '\"key\" :'", check=False)
    counts = manuals.stdout.split()[-2:]
    checks.expect(manuals.returncode == 0 and counts[0] == counts[1],
                  "man pages muevald(8), muevalctl(1) and muevald.toml(5), with every setting", manuals.stdout + manuals.stderr)

    # README: usermod -aG mueval alice; muevalctl status as alice.
    box.run("usermod -aG mueval alice")
    status = box.run("muevalctl status", as_user="alice", check=False)
    checks.expect(status.returncode == 0 and "/run/mueval/control.sock" in status.stdout,
                  "muevalctl status as alice, added to the group mueval", f"exit {status.returncode}\n{status.stdout}{status.stderr}")
    announced = eventually_or_none(lambda: 'announced as "muEval on' in box.run("muevalctl status", as_user="alice", check=False).stdout, 15)
    checks.expect(announced, "muevalctl status: Zeroconf announced as \"muEval on …\" (through avahi-daemon)",
                  box.run("muevalctl status", as_user="alice", check=False).stdout)
    journal = box.run("journalctl -u muevald --no-pager -o verbose", check=False).stdout
    checks.expect("SYSLOG_IDENTIFIER=muevald" in journal and "PRIORITY=5" in journal and "starting: data in /var/lib/mueval" in journal,
                  "journalctl -u muevald shows its lines, with priorities", journal[-2000:])

    # The console's files come from /usr/share/mueval/console (bash's /dev/tcp: no HTTP client here).
    fetch = ("exec 3<>/dev/tcp/127.0.0.1/28080 && printf 'GET /assets/console.css HTTP/1.0\\r\\nHost: 127.0.0.1\\r\\nConnection: close\\r\\n\\r\\n' >&3"
             " && timeout 10 cat <&3 > /root/console.http && head -1 /root/console.http && sed '1,/^\\r$/d' /root/console.http | sha256sum"
             " && sha256sum < /usr/share/mueval/console/console.css")
    served = box.run("bash -c " + shlex.quote(fetch), check=False).stdout.splitlines()
    checks.expect(len(served) == 3 and served[0].startswith("HTTP/1.1 200") and served[1] == served[2],
                  "the console serves the package's /usr/share/mueval/console/console.css", str(served))

    # The web capture library comes from /usr/share/mueval/web, for any origin's pages to import: the entry and a
    # module it imports from the folder beside it (capture/), which the package must carry too.
    for served_path, installed in [("/capture.js", "capture.js"), ("/capture/sources/fingers.js", "capture/sources/fingers.js")]:
        fetch = (f"exec 3<>/dev/tcp/127.0.0.1/28080 && printf 'GET {served_path} HTTP/1.0\\r\\nHost: 127.0.0.1\\r\\nConnection: close\\r\\n\\r\\n' >&3"
                 " && timeout 10 cat <&3 > /root/capture.http && head -1 /root/capture.http && grep -ci '^access-control-allow-origin: \\*' /root/capture.http"
                 f" && sed '1,/^\\r$/d' /root/capture.http | sha256sum && sha256sum < /usr/share/mueval/web/{installed}")
        served = box.run("bash -c " + shlex.quote(fetch), check=False).stdout.splitlines()
        checks.expect(len(served) == 4 and served[0].startswith("HTTP/1.1 200") and served[1] == "1" and served[2] == served[3],
                      f"the console serves the package's /usr/share/mueval/web/{installed} to any origin", str(served))

    # The sandboxed children's scripts come from /usr/share/mueval/python, beside the program's bin/ (ChildScript).
    scripts = " ".join(f"/usr/share/mueval/python/{name}" for name in ["face_scan.py", "whisper_recogniser.py"])
    children = box.run(f"for f in {scripts}; do test -r $f || exit 1; done && dpkg -S {scripts}", check=False)
    checks.expect(children.returncode == 0 and children.stdout.count("mueval: ") == 2,
                  "the package's face scan and Whisper scripts are in /usr/share/mueval/python", children.stdout + children.stderr)

    # A changed setting, applied by systemctl reload in the same process. Also the lab's edit that
    # the upgrade must keep.
    box.run("sed -i 's/^#level = \"info\"/level = \"debug\"/' /etc/mueval/muevald.toml && grep -q '^level = \"debug\"' /etc/mueval/muevald.toml")
    reload = box.run("systemctl reload muevald", check=False)
    applied = reload.returncode == 0 and eventually_or_none(
        lambda: "reload: applied log.level" in box.run("journalctl -u muevald --no-pager -o cat", check=False).stdout, 10)
    checks.expect(applied and properties(box, "MainPID")["MainPID"] == show["MainPID"],
                  "systemctl reload muevald applies log.level = \"debug\" in the same process", reload.stdout + reload.stderr)

    # A simulated phone (mueval-tools) records a session.
    started = time.monotonic()
    tools_install = apt(box, f"install ./{os.path.basename(tools)}")
    timings["apt install ./mueval-tools…deb"] = time.monotonic() - started
    checks.expect(tools_install.returncode == 0, "apt install ./mueval-tools…deb", tools_install.stdout[-2000:] + tools_install.stderr)
    box.run(f"muevalctl start --name {SESSION}", as_user="alice")
    simulated = box.run("muevalsim --connect 127.0.0.1:28021 --scenario plainnote --speed 50 --seed 7", as_user="alice",
                        check=False, timeout=120)
    box.run("muevalctl stop --all", as_user="alice", check=False)
    recorded = {i: s for i, s in (sessions(box) or {}).items() if s.get("name") == SESSION}
    events = next(iter(recorded.values()), {}).get("events", 0)
    checks.expect(simulated.returncode == 0 and len(recorded) == 1 and events > 0,
                  f"muevalsim records a session ({events} events)", simulated.stdout[-1500:] + simulated.stderr[-1500:])

    restart = box.run("systemctl restart muevald", check=False, timeout=60)
    after = sessions(box) if restart.returncode == 0 else None
    checks.expect(after is not None and {i: s["events"] for i, s in after.items() if i in recorded}
                  == {i: s["events"] for i, s in recorded.items()} and len(recorded) == 1,
                  "the session and its events survive systemctl restart", str(after))

    # Last of the first install, as it takes up to half of WatchdogSec.
    pinged = eventually_or_none(lambda: properties(box, "WatchdogTimestampMonotonic")["WatchdogTimestampMonotonic"]
                                not in ("", "0", show["WatchdogTimestampMonotonic"]), 20)
    checks.expect(show["WatchdogUSec"] == "30s" and pinged, "the watchdog is armed (30 s) and muevald pings it", str(show))

    # The next build: the lab's configuration edit and the sessions stay, muevald restarts into it.
    before = properties(box, "MainPID")["MainPID"]
    started = time.monotonic()
    upgraded = apt(box, f"install ./{os.path.basename(upgrade)}")
    timings["apt upgrade to the next build"] = time.monotonic() - started
    version = box.run("dpkg-query -W -f='${Version}' mueval", check=False).stdout
    checks.expect(upgraded.returncode == 0 and version.endswith("+1"), f"apt install of the next build ({version}) upgrades",
                  upgraded.stdout[-2000:] + upgraded.stderr)
    kept = box.run("grep -c '^level = \"debug\"' /etc/mueval/muevald.toml", check=False).stdout.strip()
    checks.expect(kept == "1" and "dpkg-dist" not in box.run("ls /etc/mueval", check=False).stdout,
                  "the upgrade keeps the edited /etc/mueval/muevald.toml", box.run("ls -la /etc/mueval", check=False).stdout)
    now = properties(box, "ActiveState", "MainPID")
    checks.expect(now["ActiveState"] == "active" and now["MainPID"] not in ("0", before),
                  "the upgrade restarts muevald", f"before {before}, now {now}")
    after = sessions(box) or {}
    checks.expect({i: s["events"] for i, s in after.items() if i in recorded} == {i: s["events"] for i, s in recorded.items()},
                  "the upgrade keeps the recorded session", str(after))

    # Purge: the configuration goes, the recordings stay; the service is stopped.
    started = time.monotonic()
    purge = apt(box, "purge mueval")
    timings["apt purge mueval"] = time.monotonic() - started
    recording = next(iter(recorded.values()), {}).get("path", "")
    recording = os.path.join("/var/lib/mueval", recording)  # as stored: relative to the data directory, or absolute
    files = box.run(f"test -s {shlex.quote(recording)} && ls -R /var/lib/mueval", check=False)
    checks.expect(purge.returncode == 0 and box.run("test ! -e /etc/mueval", check=False).returncode == 0
                  and "kept the recordings in /var/lib/mueval" in purge.stdout,
                  "apt purge mueval removes /etc/mueval and says the recordings stay", purge.stdout[-2000:] + purge.stderr)
    checks.expect(files.returncode == 0, f"purge leaves the recordings in /var/lib/mueval ({recording})", files.stdout + files.stderr)
    gone = box.run("pgrep -x muevald; systemctl is-active muevald", check=False).stdout.split()
    checks.expect(gone == ["inactive"], "purge stops muevald", str(gone))

    # An administrator's policy-rc.d forbids starting services: the package installs and is
    # enabled, not started. Then a purge asked to remove the recordings does.
    box.run("printf '#!/bin/sh\\nexit 101\\n' > /usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d")
    held = apt(box, f"install ./{os.path.basename(upgrade)}")
    state = properties(box, "ActiveState", "UnitFileState")
    checks.expect(held.returncode == 0 and state == {"ActiveState": "inactive", "UnitFileState": "enabled"},
                  "with policy-rc.d saying no, apt install enables muevald but does not start it", f"{state}\n{held.stdout[-1500:]}")
    box.run("rm /usr/sbin/policy-rc.d")
    wiped = apt(box, "purge mueval", environment="MUEVAL_PURGE_RECORDINGS=yes")
    checks.expect(wiped.returncode == 0 and box.run("test ! -e /var/lib/mueval", check=False).returncode == 0,
                  "MUEVAL_PURGE_RECORDINGS=yes apt purge mueval removes /var/lib/mueval", wiped.stdout[-1500:] + wiped.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--debs", default=REPOSITORY, help="where mueval_*.deb and mueval-tools_*.deb are (default: the repository)")
    parser.add_argument("--timeout", type=int, default=900, help="seconds for everything, the tree's first build included")
    options = parser.parse_args()

    def expired(*_):
        raise Failure(f"the test took more than {options.timeout} s")

    signal.signal(signal.SIGALRM, expired)
    signal.alarm(options.timeout)
    began = time.monotonic()
    timings = {}
    checks = Checks()
    box, work, lock, left = None, None, None, []
    try:
        check_machine()
        for tool in ("apt-get", "dpkg-scanpackages", "dpkg-deb"):
            if shutil.which(tool) is None:
                raise Failure(f"{tool} is missing (make deb-deps installs dpkg-dev)")
        deb, tools = newest(options.debs, "mueval"), newest(options.debs, "mueval-tools")
        log(f"testing {os.path.basename(deb)} and {os.path.basename(tools)}")
        started = time.monotonic()
        root, lock = tree(host_release(), sorted(BASE_PACKAGES), cache=CACHE)
        timings["tree"] = time.monotonic() - started

        work = tempfile.mkdtemp(prefix="mueval-package-", dir="/var/tmp")
        debs = os.path.join(work, "debs")
        os.makedirs(debs)
        for package in (deb, tools):
            shutil.copy(package, debs)
        started = time.monotonic()
        upgrade = next_build(deb, debs)
        timings["the next build (VERSION+1)"] = time.monotonic() - started
        started = time.monotonic()
        repository = os.path.join(work, "repository")
        fetched = local_repository(root, [os.path.join(debs, os.path.basename(p)) for p in (deb, tools)], repository)
        timings["dependencies into a local repository"] = time.monotonic() - started
        log(f"{len(fetched)} packages from the mirror in the local repository")

        box = Container(root, [(debs, "/mnt/debs"), (repository, "/srv/mueval-apt")], os.path.join(work, "console.log"))
        started = time.monotonic()
        box.boot()
        wait_for_boot(box, checks)
        timings["boot to running"] = time.monotonic() - started
        # The lab's apt sees the Debian archive; this one, offline, sees the packages fetched for it.
        box.run("cp /mnt/debs/*.deb /root/ && echo 'deb [trusted=yes] file:/srv/mueval-apt ./' > /etc/apt/sources.list"
                " && apt-get update -qq", timeout=120)

        started = time.monotonic()
        deploy_and_check(box, checks, timings, deb, tools, upgrade)
        timings["install, checks, upgrade, purge"] = time.monotonic() - started
    except Skip as reason:
        log(f"SKIP: {reason} -- the package was NOT tested under systemd")
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
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)
        if lock is not None:
            lock.close()
    return verdict(checks, left, timings, began)


if __name__ == "__main__":
    sys.exit(main())
