#!/usr/bin/python3
"""Whisper as the Debian packages install it, under a booted systemd: `apt install` of mueval and mueval-speech in
package_under_systemd.py's Debian system, then a think-aloud session that the packaged muevald, in its unit's
sandbox, transcribes with Whisper (docs/PACKAGING.md, "The speech package's test"; docs/SPEECH.md).

    sudo Tests/Systemd/speech_package_under_systemd.py [--debs DIR] [--speech-deb FILE] [--timeout SECONDS]

DIR (default: the repository) holds mueval_VERSION_ARCH.deb and mueval-tools_VERSION_ARCH.deb (`make deb`), FILE
is mueval-speech_VERSION_ARCH.deb (`packaging/speech/build-deb.sh DIR`; default: the newest in DIR). The tree and the
local apt repository are package_under_systemd.py's, with what these checks use besides (espeak-ng, which
`muevalsim --think-aloud` speaks with); the container has a name and a work directory of its own, so that it cannot
collide with package_under_systemd.py started at the same time (the two take turns at the tree cache's lock). Not in
`make test` or .ci/run: mueval-speech is 243 MB and 9 minutes to build.

Exit status as unit_under_systemd.py's: 0 when every check passed, 1 with each failed check on stderr, 0 with
"SKIP: ..." only when this machine cannot run a container at all.
"""

import argparse
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
from unit_under_systemd import (REPOSITORY, Checks, Container, Failure, Skip, check_machine, host_release,  # noqa: E402
                                log, properties, run, tree, verdict, wait_for_boot)
from package_under_systemd import BASE_PACKAGES, CACHE, apt, local_repository, newest, sessions  # noqa: E402

SESSION = "speech-test"
# What the checks use inside besides the packages under test: muevalsim --think-aloud speaks with espeak-ng.
TEST_PACKAGES = ["espeak-ng"]
# The model the default language (en) takes, with the hash of its model.bin (packaging/speech/models.sha256).
MODEL = "Whisper tiny.en sha256 1a5afae06a4db91c975c9a9d78be5cc110ee4ea022ad57d55492e4550e936b2a"
# Word error rate allowed on espeak-ng's voice: tiny.en made 4.1 % on the benchmark hour (docs/SPEECH.md), PocketSphinx
# 47–67 %; the margin is for a short recording, where a few words weigh more.
MAX_WORD_ERROR_RATE = 0.15


class SpeechContainer(Container):
    """package_under_systemd.py's container under a name of its own (mueval-speech-test-PID), with cgroups to match:
    whatever else boots on this machine, a tear-down removes only its own."""

    def __init__(self, root, binds, log_path):
        super().__init__(root, binds, log_path)
        self.name = f"mueval-speech-test-{os.getpid()}"
        self.cgroups = [os.path.join(os.path.dirname(d), self.name) for d in self.cgroups]


def wanting(packages, directory):
    """A package of nothing that depends on `packages`, so that local_repository fetches them and what they need; the
    container installs them by name."""
    package = os.path.join(directory, "wants")
    os.makedirs(os.path.join(package, "DEBIAN"))
    with open(os.path.join(package, "DEBIAN", "control"), "w") as f:
        f.write("Package: mueval-speech-test-wants\nVersion: 1\nArchitecture: all\nMaintainer: muEval <root@localhost>\n"
                f"Depends: {', '.join(packages)}\nDescription: what the speech package's test uses\n")
    built = os.path.join(directory, "mueval-speech-test-wants_1_all.deb")
    run(["dpkg-deb", "--root-owner-group", "--build", package, built])
    shutil.rmtree(package)
    return built


def query(box, path, sql):
    """The rows `sql` selects from the session file, read with Debian's python3 (which mueval-speech brings) as mueval,
    so that SQLite's -shm file, if it makes one, is the service's; None when it cannot be read."""
    script = ("import json, sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.execute('PRAGMA query_only = 1'); "
              "print(json.dumps(db.execute(sys.argv[2]).fetchall()))")
    read = box.run(f"python3 -c \"{script}\" {shlex.quote(path)} {shlex.quote(sql)}", as_user="mueval", check=False)
    return json.loads(read.stdout) if read.returncode == 0 else None


def finished(box, path):
    """The transcription status rows (stream, state, engine, error) once every stream's is done or failed; None before."""
    rows = query(box, path, "SELECT stream, state, engine, error FROM transcription")
    return rows if rows and all(state in ("done", "failed") for _, state, _, _ in rows) else None


def words(text):
    return re.findall(r"[a-z']+", text.lower())


def word_error_rate(said, heard):
    """Word-level edit distance over the words said."""
    previous = list(range(len(heard) + 1))
    for row, word in enumerate(said):
        current = [row + 1] + [0] * len(heard)
        for column, other in enumerate(heard):
            current[column + 1] = min(previous[column] + (word != other), previous[column + 1] + 1, current[column] + 1)
        previous = current
    return previous[-1] / max(len(said), 1)


def journal(box):
    return box.run("journalctl -u muevald --no-pager -o cat", check=False).stdout


def install_and_transcribe(box, checks, timings, deb, tools, speech):
    box.run("useradd --create-home alice")
    for package, also in ((deb, ""), (tools, " " + " ".join(TEST_PACKAGES))):
        started = time.monotonic()
        install = apt(box, f"install /mnt/debs/{os.path.basename(package)}{also}")
        timings[f"apt install {os.path.basename(package)}{also}"] = time.monotonic() - started
        if not checks.expect(install.returncode == 0, f"apt install {os.path.basename(package)}{also}",
                             install.stdout[-3000:] + install.stderr):
            raise Failure("the packages did not install; the other checks need them")
    box.run("usermod -aG mueval alice")

    # docs/SPEECH.md, "The Debian package": apt install ./mueval-speech_….deb, then systemctl restart muevald.
    started = time.monotonic()
    install = apt(box, f"install /mnt/debs/{os.path.basename(speech)}", timeout=900)
    timings["apt install ./mueval-speech…deb"] = time.monotonic() - started
    python = box.run("dpkg-query -W -f='${Version}\\n' python3 python3-numpy && python3 --version"
                     " && test -r /usr/lib/mueval-speech/models/tiny.en/model.bin && test -d /usr/lib/mueval-speech/site/faster_whisper",
                     check=False)
    if not checks.expect(install.returncode == 0 and python.returncode == 0 and "Python 3.11." in python.stdout,
                         "apt install ./mueval-speech…deb: Debian's python3 3.11 and python3-numpy, Whisper in /usr/lib/mueval-speech",
                         install.stdout[-3000:] + install.stderr + python.stdout + python.stderr):
        raise Failure("mueval-speech did not install; the other checks need it")
    restart = box.run("systemctl restart muevald", check=False, timeout=60)
    show = properties(box, "ActiveState", "MainPID")
    checks.expect(restart.returncode == 0 and show["ActiveState"] == "active", "systemctl restart muevald", str(show) + restart.stderr)
    # What the service sees of it: its mount namespace (ProtectSystem=strict, ProtectHome, PrivateTmp), as mueval.
    seen = box.run(f"nsenter --target={show['MainPID']} --mount -- setpriv --reuid=mueval --regid=mueval --clear-groups"
                   " sh -c 'test -r /usr/lib/mueval-speech/models/tiny.en/model.bin && ls /usr/lib/mueval-speech/site'", check=False)
    checks.expect(seen.returncode == 0 and "ctranslate2" in seen.stdout,
                  "the service (its mount namespace, as mueval) reads /usr/lib/mueval-speech", seen.stdout + seen.stderr)

    # A tester thinks aloud (espeak-ng's voice streamed as the microphone) through a scenario with a failed task.
    box.run(f"muevalctl start --name {SESSION}", as_user="alice")
    started = time.monotonic()
    simulated = box.run("muevalsim --connect 127.0.0.1:28021 --scenario wordpress --seed 7 --speed 8 --events 500 --think-aloud"
                        " --speech-log /home/alice/said.jsonl --fail-task 'Open the blog'", as_user="alice", check=False, timeout=300)
    timings["muevalsim --think-aloud"] = time.monotonic() - started
    box.run("muevalctl stop --all", as_user="alice", check=False)
    stopped = time.monotonic()
    said = [json.loads(line) for line in box.run("cat /home/alice/said.jsonl", check=False).stdout.splitlines() if line]
    recorded = [s for s in (sessions(box) or {}).values() if s.get("name") == SESSION]
    if not checks.expect(simulated.returncode == 0 and said and len(recorded) == 1,
                         f"muevalsim --think-aloud records a session ({len(said)} lines said)",
                         simulated.stdout[-1500:] + simulated.stderr[-1500:]):
        raise Failure("no think-aloud session to transcribe")
    path = os.path.join("/var/lib/mueval", recorded[0]["path"])  # as stored: relative to the data directory, or absolute

    # muevald transcribes the stream by itself once the session stopped: its first Whisper transcription since the start.
    deadline = stopped + 600
    while not (rows := finished(box, path)) and time.monotonic() < deadline:
        time.sleep(2)  # each look starts a python3: not too often beside the transcription
    timings["first transcription (stop to done)"] = time.monotonic() - stopped
    state = rows[0] if rows else None
    audio = (query(box, path, "SELECT sum(duration) FROM media WHERE stream = 'voice-1'") or [[None]])[0][0] or 0
    if not checks.expect(state is not None and state[1] == "done",
                         f"muevald transcribes the think-aloud stream ({audio:.0f} s of audio) under its unit",
                         f"status {state or query(box, path, 'SELECT * FROM transcription')}\n" + journal(box)[-3000:]):
        raise Failure("no transcript to read")
    engine = state[2] or ""
    checks.expect(engine.startswith("faster-whisper ") and MODEL in engine and "pocketsphinx" not in engine.lower(),
                  f"the transcript's engine is Whisper ({engine[:60]}…), not PocketSphinx", engine)

    # The transcript as the session file holds it: the words said, and the exclamations among them.
    segments = query(box, path, "SELECT text, exclamation FROM transcripts ORDER BY start, id") or []
    heard = [w for text, _ in segments for w in words(text)]
    rate = word_error_rate([w for line in said for w in words(line["text"])], heard)
    checks.expect(segments and rate <= MAX_WORD_ERROR_RATE,
                  f"the transcript has the words said ({rate:.1%} word error rate, {len(segments)} segments)",
                  "said: " + " / ".join(line["text"] for line in said) + "\nheard: " + " / ".join(text for text, _ in segments))
    exclamations = [exclamation for _, exclamation in segments if exclamation]
    checks.expect(exclamations, f"exclamations found in Whisper's words: {', '.join(sorted(set(exclamations)))}",
                  " / ".join(text for text, _ in segments))
    # As a lab finds it: muevalctl events --grep, whose --json gives speech lines beside the events.
    phrase = exclamations[0] if exclamations else "publish"
    found = box.run(f"muevalctl --json events {SESSION} --grep {shlex.quote(phrase)}", as_user="alice", check=False).stdout
    checks.expect('{"speech"' in found, f"muevalctl events --grep '{phrase}' finds it in the transcript", found[-1500:])

    logged = journal(box)
    done = re.search(r"transcribed in (\d+) s", logged)
    if done:
        timings["muevald's transcription (its journal)"] = float(done.group(1))
    checks.expect(done and "Whisper cannot run" not in logged and "cannot be transcribed" not in logged,
                  "muevald's journal: transcribed, no \"Whisper cannot run\"",
                  "\n".join(line for line in logged.splitlines() if "transcri" in line or "Whisper" in line))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--debs", default=REPOSITORY, help="where mueval_*.deb and mueval-tools_*.deb are (default: the repository)")
    parser.add_argument("--speech-deb", help="mueval-speech_VERSION_ARCH.deb (default: the newest in --debs)")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds for everything, the tree's first build included")
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
        speech = options.speech_deb or newest(options.debs, "mueval-speech")
        if not os.path.isfile(speech):
            raise Failure(f"no {speech} (packaging/speech/build-deb.sh DIR builds it)")
        log(f"testing {', '.join(os.path.basename(p) for p in (deb, tools, speech))}")
        started = time.monotonic()
        root, lock = tree(host_release(), sorted(BASE_PACKAGES), cache=CACHE)
        timings["tree"] = time.monotonic() - started

        work = tempfile.mkdtemp(prefix="mueval-speech-package-", dir="/var/tmp")
        debs = os.path.join(work, "debs")
        os.makedirs(debs)
        for package in (deb, tools, speech):
            shutil.copy(package, debs)
        started = time.monotonic()
        repository = os.path.join(work, "repository")
        wanted = [os.path.join(debs, os.path.basename(p)) for p in (deb, tools, speech)] + [wanting(TEST_PACKAGES, work)]
        fetched = local_repository(root, wanted, repository)
        timings["dependencies into a local repository"] = time.monotonic() - started
        log(f"{len(fetched)} packages from the mirror in the local repository")

        box = SpeechContainer(root, [(debs, "/mnt/debs"), (repository, "/srv/mueval-apt")], os.path.join(work, "console.log"))
        started = time.monotonic()
        box.boot()
        wait_for_boot(box, checks)
        timings["boot to running"] = time.monotonic() - started
        box.run("echo 'deb [trusted=yes] file:/srv/mueval-apt ./' > /etc/apt/sources.list && apt-get update -qq", timeout=120)

        started = time.monotonic()
        install_and_transcribe(box, checks, timings, deb, tools, speech)
        timings["install and transcribe"] = time.monotonic() - started
    except Skip as reason:
        log(f"SKIP: {reason} -- Whisper was NOT tested under systemd")
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
