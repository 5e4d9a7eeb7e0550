#!/usr/bin/python3
"""Event latency while think-aloud media streams (issue 17): a device sends touch-like events at
200/s for 10 s; the round trip from writing an event to the first <ack> covering its seq is its
latency. Three runs against a release muevald on loopback: events alone; while a second connection
of the same device streams 10 MB of WAV chunks of 64 KiB as fast as the server takes them; and with
the same 10 MB interleaved on the events' own connection (chunks of 32 KiB, about a second of 16 kHz
speech). Prints a markdown table. Usage: media_latency.py --muevald PATH [--muevalctl PATH]"""

import argparse
import base64
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time

RATE, SECONDS, MEDIA_BYTES = 200, 10, 10 << 20


def event(seq, now):
    return (f"<event><key>class</key><string>UserInputEvent</string><key>timestamp</key><real>{now:.6f}</real>"
            f"<key>seq</key><integer>{seq}</integer><key>x</key><integer>100</integer><key>y</key><integer>200</integer></event>\n").encode()


def media(seq, part, size, now):
    data = base64.b64encode(bytes(size)).decode()
    return (f"<media><key>stream</key><string>voice-1</string><key>contentType</key><string>audio/wav</string>"
            f"<key>part</key><integer>{part}</integer><key>start</key><real>{now:.6f}</real><key>seq</key><integer>{seq}</integer>"
            f"<key>data</key><data>{data}</data></media>\n").encode()


class Acks(threading.Thread):
    """Reads a connection's replies; the time each ack arrived."""

    def __init__(self, sock):
        super().__init__(daemon=True)
        self.sock, self.acks, self.buffer = sock, [], b""

    def run(self):
        while True:
            try:
                data = self.sock.recv(65536)
            except OSError:
                return
            if not data:
                return
            now = time.monotonic()
            self.buffer += data
            for seq in re.findall(rb"<ack><key>seq</key><integer>(\d+)</integer></ack>", self.buffer):
                self.acks.append((int(seq), now))
            self.buffer = self.buffer[self.buffer.rfind(b">") + 1:]


def connect(port):
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(b"<hello><key>deviceId</key><string>bench-phone</string></hello>\n")
    return sock


def run(port, mode):
    sock = connect(port)
    acks = Acks(sock)
    acks.start()
    sent = {}
    media_sock, media_done = None, threading.Event()
    base_seq = int(time.time() * 1000) * 1000   # fresh seqs every run: none is a duplicate

    def stream(target, first_seq, size):
        part, seq, total = 0, first_seq, 0
        while total < MEDIA_BYTES:
            target.sendall(media(seq, part, size, time.time()))
            part, seq, total = part + 1, seq + 1, total + size
        media_done.set()

    if mode == "other connection":
        media_sock = connect(port)
        Acks(media_sock).start()
        threading.Thread(target=stream, args=(media_sock, base_seq + 10_000_000, 64 << 10), daemon=True).start()
    start = time.monotonic()
    lock = threading.Lock()
    chunk_every = max(1, (RATE * SECONDS) // (MEDIA_BYTES // (32 << 10)))
    part, seq = 0, base_seq
    for index in range(RATE * SECONDS):
        due = start + index / RATE
        delay = due - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        seq += 1
        with lock:
            sent[seq] = time.monotonic()
            sock.sendall(event(seq, time.time()))
        if mode == "same connection" and index % chunk_every == 0:
            # The connection's one sequence, as a capture library numbers events and chunks.
            seq += 1
            sock.sendall(media(seq, part, 32 << 10, time.time()))
            part += 1
    deadline = time.monotonic() + 10
    last = seq
    while time.monotonic() < deadline and not any(seq >= last for seq, _ in acks.acks):
        time.sleep(0.01)
    latencies = []
    for seq, at in sent.items():
        ack = next((t for s, t in acks.acks if s >= seq and t >= at), None)
        if ack is not None:
            latencies.append((ack - at) * 1000)
    sock.close()
    if media_sock:
        media_done.wait(30)
        media_sock.close()
    latencies.sort()
    pick = lambda q: latencies[min(len(latencies) - 1, int(len(latencies) * q))]
    return len(latencies), pick(0.5), pick(0.99), latencies[-1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--muevald", required=True)
    parser.add_argument("--muevalctl", default=None)
    args = parser.parse_args()
    muevalctl = args.muevalctl or os.path.join(os.path.dirname(args.muevald), "muevalctl")
    directory = tempfile.mkdtemp(prefix="mueval-media-bench-")
    port = 29000 + os.getpid() % 1000
    daemon = subprocess.Popen([args.muevald, "--data-dir", directory, "--listen", f"127.0.0.1:{port}", "--no-zeroconf",
                               "--no-console", "--log-level", "warning"])
    try:
        socket_path = os.path.join(directory, "control.sock")
        for _ in range(200):
            if os.path.exists(socket_path):
                break
            time.sleep(0.05)
        subprocess.run([muevalctl, "--socket", socket_path, "start", "--name", "bench", "--device", "bench-phone"],
                       check=True, capture_output=True)
        print("| run | events acknowledged | p50 ms | p99 ms | max ms |")
        print("|---|---|---|---|---|")
        for mode in ["events alone", "other connection", "same connection"]:
            count, p50, p99, worst = run(port, mode)
            label = {"events alone": "200 events/s alone",
                     "other connection": "with 10 MB of media (64 KiB chunks) on a second connection",
                     "same connection": "with 10 MB of media (32 KiB chunks) on the same connection"}[mode]
            print(f"| {label} | {count} | {p50:.1f} | {p99:.1f} | {worst:.1f} |", flush=True)
    finally:
        daemon.terminate()
        daemon.wait(10)
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
