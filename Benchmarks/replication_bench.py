#!/usr/bin/env python3
"""Replication into PostgreSQL next to local ingest (make bench; docs/POSTGRES.md). A PostgreSQL server
of its own (initdb in a temporary directory, loopback, a free port, as the postgres user when run
as root; fsync on, as a real server has it) and one muevald (release) replicating into it; muevalsim's
simulated phones send the touch profile (taps on one button: small events, the highest event rate).

1. Local ingest alone: muevald without replication, --rate max for --seconds.
2. The same with replication running: ingest events/s, and how long PostgreSQL took to have all of it.
3. Replication throughput: a backlog recorded while PostgreSQL is down, then timed into PostgreSQL.
4. Replication lag at a paced 50,000 and 10,000 events/s: per event, from its arrival at muevald (`received`)
   to the start of the transaction that put it in PostgreSQL (`events.replicated`), p50/p99/max.

    Benchmarks/replication_bench.py --muevald .build-release/release/muevald --muevalsim .build-release/release/muevalsim \
        --muevalctl .build-release/release/muevalctl [--seconds 10]
"""
import argparse, glob, json, os, pwd, shutil, subprocess, tempfile, time

from benchkit import cpu_seconds, free_port, simulate, start_muevald, touch_scenario


def postgres_pids(directory):
    """The server's processes: the postmaster (its pid file's first line) and its children."""
    with open(os.path.join(directory, "data", "postmaster.pid")) as f:
        master = int(f.readline())
    children = subprocess.run(["pgrep", "-P", str(master)], capture_output=True, text=True).stdout.split()
    return [master, *map(int, children)]


class Postgres:
    def __init__(self, scratch):
        versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
        if not versions:
            raise SystemExit("PostgreSQL's server is not installed (make test-deps installs postgresql)")
        self.bin = os.path.dirname(versions[-1])
        self.dir = os.path.join(scratch, "pg")
        os.makedirs(self.dir)
        self.root = os.getuid() == 0
        if self.root:
            user = pwd.getpwnam("postgres")
            os.chown(scratch, user.pw_uid, user.pw_gid)
            os.chown(self.dir, user.pw_uid, user.pw_gid)
        self.port = free_port()
        self.run("initdb", "-D", self.dir + "/data", "-U", "mueval", "--auth=trust", "-E", "UTF8")
        self.start()

    def run(self, program, *arguments):
        command = [os.path.join(self.bin, program), *arguments]
        if self.root:
            command = ["runuser", "-u", "postgres", "--", *command]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)

    def start(self):
        self.run("pg_ctl", "-D", self.dir + "/data", "-l", self.dir + "/log", "-w", "start", "-o",
                 f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1")

    def stop(self):
        self.run("pg_ctl", "-D", self.dir + "/data", "-m", "fast", "-w", "stop")

    def query(self, sql):
        return subprocess.run([os.path.join(self.bin, "psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "mueval", "-d", "postgres",
                               "-X", "-A", "-t", "-c", sql], check=True, capture_output=True, text=True).stdout.strip()

    @property
    def url(self):
        return f"postgres://mueval@127.0.0.1:{self.port}/postgres"


class Daemon:
    def __init__(self, args, scratch, name, postgres_url=None):
        self.args, self.port = args, free_port()
        self.socket = os.path.join(scratch, name + ".sock")
        more = f'[storage.postgres]\nurl = "{postgres_url}"\nlab = "bench"\n' if postgres_url else ""
        self.process = start_muevald(args.muevald, scratch, name, self.port, more=more)

    def send(self, scenario, devices, rate, seconds):
        return simulate(self.args.muevalsim, self.port, scenario, devices, rate, seconds)

    def replication(self):
        status = subprocess.run([self.args.muevalctl, "--socket", self.socket, "status", "--json"], capture_output=True, text=True, check=True)
        return json.loads(status.stdout).get("replication") or {}

    def caught_up(self, timeout=600):
        """Seconds until PostgreSQL has every event (polled every 50 ms)."""
        start = time.monotonic()
        while time.monotonic() - start < timeout:
            replication = self.replication()
            if replication.get("state") == "replicating" and replication.get("pendingEvents") == 0:
                return time.monotonic() - start
            time.sleep(0.05)
        raise SystemExit(f"replication did not catch up: {self.replication()}")

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=60)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--muevald", required=True)
    parser.add_argument("--muevalsim", required=True)
    parser.add_argument("--muevalctl", required=True)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--devices", type=int, default=16)
    args = parser.parse_args()
    args.muevald, args.muevalsim, args.muevalctl = map(os.path.abspath, (args.muevald, args.muevalsim, args.muevalctl))
    scratch = tempfile.mkdtemp(prefix="replication-bench-")
    postgres, daemons = None, []
    try:
        touch = touch_scenario(scratch)
        postgres = Postgres(scratch)
        print(f"Replication into PostgreSQL (Benchmarks/replication_bench.py: touch profile, {args.devices} devices, "
              f"--duration {args.seconds:g}, loopback, storage.synchronous = normal, PostgreSQL {os.path.basename(os.path.dirname(postgres.bin))} local with fsync):")

        alone = Daemon(args, scratch, "alone")
        daemons.append(alone)
        events, elapsed = alone.send(touch, args.devices, "max", args.seconds)
        alone.stop()
        daemons.remove(alone)
        baseline = events / elapsed
        print(f"  local ingest alone                  {baseline:>9.0f} events/s")

        lab = Daemon(args, scratch, "lab", postgres.url)
        daemons.append(lab)
        lab.caught_up()
        events, elapsed = lab.send(touch, args.devices, "max", args.seconds)
        after = lab.caught_up()
        print(f"  local ingest while replicating      {events / elapsed:>9.0f} events/s ({events / elapsed / baseline:.2f}× alone); "
              f"PostgreSQL had all {events} events {after:.1f} s after the last was acknowledged "
              f"({events / (elapsed + after):.0f} events/s end to end)")

        postgres.stop()
        backlog, _ = lab.send(touch, args.devices, "max", args.seconds)
        pending = lab.replication().get("pendingEvents", 0)
        postgres.start()
        servers = postgres_pids(postgres.dir)
        before_cpu = cpu_seconds([lab.process.pid]), cpu_seconds(servers, reaped_children=True)
        took = lab.caught_up()
        servers = postgres_pids(postgres.dir)
        muevald_cpu, server_cpu = cpu_seconds([lab.process.pid]) - before_cpu[0], cpu_seconds(servers, reaped_children=True) - before_cpu[1]
        print(f"  replication of a backlog            {backlog / took:>9.0f} events/s into PostgreSQL "
              f"({backlog} events recorded while it was down, {pending} counted waiting, caught up in {took:.1f} s; "
              f"CPU s per 100k events: muevald {muevald_cpu / backlog * 1e5:.2f}, PostgreSQL {server_cpu / backlog * 1e5:.2f})")

        for target in (50_000, 10_000):
            before = postgres.query("SELECT COALESCE(max(received), 0) FROM events")
            paced, elapsed = lab.send(touch, args.devices, f"{target / args.devices:g}", args.seconds)
            lab.caught_up()
            lag = postgres.query(f"""
                SELECT round((percentile_cont(0.5) WITHIN GROUP (ORDER BY l) * 1000)::numeric, 1) || ' / ' ||
                       round((percentile_cont(0.99) WITHIN GROUP (ORDER BY l) * 1000)::numeric, 1) || ' / ' ||
                       round((max(l) * 1000)::numeric, 1)
                FROM (SELECT extract(epoch FROM replicated) - received AS l FROM events WHERE received > {before}) lags""")
            print(f"  lag at a paced {target:>6,} events/s     {paced / elapsed:>9.0f} events/s achieved; arrival→in PostgreSQL "
                  f"p50 / p99 / max {lag} ms")
        lab.stop()
        daemons.remove(lab)
    finally:
        for daemon in daemons:
            daemon.process.kill()
        if postgres:
            try:
                postgres.stop()
            except Exception:
                pass
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
