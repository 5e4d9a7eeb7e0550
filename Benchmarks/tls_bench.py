#!/usr/bin/env python3
"""TLS ingest next to plaintext (make bench): one muevald (release) with a plaintext and a TLS listener
side by side on loopback, certificates made here with openssl, and muevalsim's simulated phones
sending as fast as acknowledgements allow, first in plaintext, then over TLS, with 4 and 256
connections, in two profiles: mixed (the Wordpress scenario: views with screenshots, touches, text,
sensors) and touch (a scenario of taps on one button, written here). Prints events/s and muevald's
CPU seconds per 100,000 events for each, and the ratios. The same client sends both ways, so the
ratio is the server's and the client's TLS cost together; CPU per event is muevald's alone.

    Benchmarks/tls_bench.py --muevald .build-bench/release/muevald --muevalsim .build-bench/release/muevalsim [--seconds 10]
"""
import argparse, json, os, shutil, socket, subprocess, tempfile, time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def openssl(directory, *arguments):
    subprocess.run(["openssl", *arguments], cwd=directory, check=True, capture_output=True)


def certificates(directory):
    openssl(directory, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
            "-subj", "/CN=bench CA", "-keyout", "ca.key", "-out", "ca.pem")
    with open(os.path.join(directory, "san.cnf"), "w") as f:
        f.write("subjectAltName = IP:127.0.0.1\n")
    openssl(directory, "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=127.0.0.1",
            "-keyout", "server.key", "-out", "server.csr")
    openssl(directory, "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-set_serial", "1",
            "-days", "2", "-extfile", "san.cnf", "-out", "server.pem")


TOUCH = {
    "name": "touch", "description": "A tester taps one button again and again.",
    "app": {"id": "bench.touch", "name": "Touch", "version": "1"},
    "initialView": "PadViewController",
    "views": [{"name": "PadViewController", "elements": [
        {"id": "button", "class": "UIButton", "frame": [100, 200, 120, 44], "title": "Tap", "action": "tap:"}]}],
    "tasks": [{"name": "Tap", "steps": [{"do": "tap", "on": "button"}] * 50}],
}


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_for(port, seconds=30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"muevald did not listen on {port}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--muevald", required=True)
    parser.add_argument("--muevalsim", required=True)
    parser.add_argument("--seconds", type=float, default=10)
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="tls-bench-")
    daemon = None
    try:
        certificates(scratch)
        plain, tls = free_port(), free_port()
        config = os.path.join(scratch, "muevald.toml")
        with open(config, "w") as f:
            f.write(f'[server]\nlisten = "127.0.0.1:{plain}"\ntls_listen = "127.0.0.1:{tls}"\nunknown_device_policy = "auto"\nmax_connections_per_address = 1024\n'
                    f'tls_certificate = "{scratch}/server.pem"\ntls_key = "{scratch}/server.key"\n'
                    f'[storage]\nsynchronous = "normal"\n[transcription]\nenabled = false\n')
        daemon = subprocess.Popen([args.muevald, "--config", config, "--data-dir", os.path.join(scratch, "data"),
                                   "--socket", os.path.join(scratch, "control.sock"), "--no-console", "--no-zeroconf"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(plain)
        wait_for(tls)
        touch = os.path.join(scratch, "touch.json")
        with open(touch, "w") as f:
            json.dump(TOUCH, f)
        print(f"TLS next to plaintext (Benchmarks/tls_bench.py: muevalsim --rate max --duration {args.seconds:g} per run, "
              "loopback, storage.synchronous = normal):")
        print("  profile  connections  transport   events/s  muevald CPU s per 100k events")
        for profile, scenario in [("mixed", "wordpress"), ("touch", touch)]:
            for connections in [4, 256]:
                results = {}
                for name, port, extra in [("plaintext", plain, []), ("TLS", tls, ["--ca", os.path.join(scratch, "ca.pem")])]:
                    before = cpu_seconds(daemon.pid)
                    start = time.monotonic()
                    run = subprocess.run([args.muevalsim, "--connect", f"127.0.0.1:{port}", "--devices", str(connections), "--rate", "max",
                                          "--duration", str(args.seconds), "--scenario", scenario, "--seed", "1", "--json", *extra],
                                         capture_output=True, text=True)
                    elapsed = time.monotonic() - start
                    cpu = cpu_seconds(daemon.pid) - before
                    if run.returncode != 0:
                        raise SystemExit(f"muevalsim failed ({profile}, {name}, {connections}): {(run.stderr + run.stdout)[-800:]}")
                    acknowledged = sum(device["acknowledged"] for device in json.loads(run.stdout)["devices"])
                    results[name] = (acknowledged / elapsed, cpu / acknowledged * 100_000)
                    print(f"  {profile:<7}  {connections:>11}  {name:<9} {results[name][0]:>9.0f}  {results[name][1]:>6.2f}")
                (plain_rate, plain_cpu), (tls_rate, tls_cpu) = results["plaintext"], results["TLS"]
                print(f"  {profile:<7}  {connections:>11}  TLS/plain {tls_rate / plain_rate:>8.2f}×  {tls_cpu / plain_cpu:>6.2f}× CPU per event")
    finally:
        if daemon:
            daemon.terminate()
            daemon.wait(timeout=30)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
