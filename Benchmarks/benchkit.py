"""What the Python benchmarks share: ports, the touch scenario, CPU readings and muevalsim runs."""
import json, os, socket, subprocess, time

# A tester taps one button again and again: small events, the highest event rate (muevalsim --scenario FILE).
TOUCH = {
    "name": "touch", "description": "A tester taps one button again and again.",
    "app": {"id": "bench.touch", "name": "Touch", "version": "1"},
    "initialView": "PadViewController",
    "views": [{"name": "PadViewController", "elements": [
        {"id": "button", "class": "UIButton", "frame": [100, 200, 120, 44], "title": "Tap", "action": "tap:"}]}],
    "tasks": [{"name": "Tap", "steps": [{"do": "tap", "on": "button"}] * 50}],
}


def touch_scenario(directory):
    """Writes TOUCH into `directory` and returns its path."""
    path = os.path.join(directory, "touch.json")
    with open(path, "w") as f:
        json.dump(TOUCH, f)
    return path


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(port, seconds=30):
    """Returns once something accepts connections on loopback `port`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"nothing listens on {port} after {seconds} s")


# What every benchmark's muevald has: auto sessions, the fast commit, no transcription.
BENCH_CONFIG = '[server]\nlisten = "127.0.0.1:{port}"\nunknown_device_policy = "auto"\nmax_connections_per_address = 1024\n{server}' \
               '[storage]\nsynchronous = "normal"\n[transcription]\nenabled = false\n{more}'


def start_muevald(muevald, directory, name, port, server="", more=""):
    """A release muevald on loopback `port` with BENCH_CONFIG (plus `server` lines in [server] and `more`
    sections), its data in DIRECTORY/NAME and its socket DIRECTORY/NAME.sock; returns once it listens."""
    config = os.path.join(directory, name + ".toml")
    with open(config, "w") as f:
        f.write(BENCH_CONFIG.format(port=port, server=server, more=more))
    process = subprocess.Popen([muevald, "--config", config, "--data-dir", os.path.join(directory, name),
                                "--socket", os.path.join(directory, name + ".sock"), "--no-console", "--no-zeroconf"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(port)
    return process


def cpu_seconds(pids, reaped_children=False):
    """User and system CPU seconds of `pids` (with `reaped_children`, also of their children that ended)."""
    total = 0.0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        ticks = int(fields[11]) + int(fields[12])
        if reaped_children:
            ticks += int(fields[13]) + int(fields[14])
        total += ticks / os.sysconf("SC_CLK_TCK")
    return total


def simulate(muevalsim, port, scenario, devices, rate, seconds, *extra):
    """One muevalsim run: (events acknowledged, seconds it took)."""
    start = time.monotonic()
    run = subprocess.run([muevalsim, "--connect", f"127.0.0.1:{port}", "--devices", str(devices), "--rate", str(rate),
                          "--duration", str(seconds), "--scenario", scenario, "--seed", "1", "--json", *extra],
                         capture_output=True, text=True)
    elapsed = time.monotonic() - start
    if run.returncode != 0:
        raise SystemExit(f"muevalsim failed: {(run.stderr + run.stdout)[-800:]}")
    return sum(device["acknowledged"] for device in json.loads(run.stdout)["devices"]), elapsed
