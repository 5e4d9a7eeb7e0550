#!/usr/bin/env python3
"""TLS ingest next to plaintext (make bench): one muevald (release) with a plaintext and a TLS listener
side by side on loopback, certificates made here with openssl, and muevalsim's simulated phones
sending as fast as acknowledgements allow, first in plaintext, then over TLS, with 4 and 256
connections, in two profiles: mixed (the Wordpress scenario: views with screenshots, touches, text,
sensors) and touch (a scenario of taps on one button, written here). Prints events/s and muevald's
CPU seconds per 100,000 events for each, and the ratios. The same client sends both ways, so the
ratio is the server's and the client's TLS cost together; CPU per event is muevald's alone.

    Benchmarks/tls_bench.py --muevald .build-release/release/muevald --muevalsim .build-release/release/muevalsim [--seconds 10]
"""
import argparse, os, shutil, subprocess, tempfile

from benchkit import cpu_seconds, free_port, simulate, start_muevald, touch_scenario, wait_for


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
        daemon = start_muevald(args.muevald, scratch, "data", plain,
                               server=f'tls_listen = "127.0.0.1:{tls}"\ntls_certificate = "{scratch}/server.pem"\ntls_key = "{scratch}/server.key"\n')
        wait_for(tls)
        touch = touch_scenario(scratch)
        print(f"TLS next to plaintext (Benchmarks/tls_bench.py: muevalsim --rate max --duration {args.seconds:g} per run, "
              "loopback, storage.synchronous = normal):")
        print("  profile  connections  transport   events/s  muevald CPU s per 100k events")
        for profile, scenario in [("mixed", "wordpress"), ("touch", touch)]:
            for connections in [4, 256]:
                results = {}
                for name, port, extra in [("plaintext", plain, []), ("TLS", tls, ["--ca", os.path.join(scratch, "ca.pem")])]:
                    before = cpu_seconds([daemon.pid])
                    acknowledged, elapsed = simulate(args.muevalsim, port, scenario, connections, "max", args.seconds, *extra)
                    cpu = cpu_seconds([daemon.pid]) - before
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
