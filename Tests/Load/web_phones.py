#!/usr/bin/env python3
"""Many web phones in one process (issue 52, item 4), each a WebSocket to muevald's /capture as capture.js keeps one
(Tests/Load/web_phone.py): touches at R a second, one drop without a goodbye at a seeded moment, everything not yet
acknowledged resent on a new socket, a goodbye after the last ack. Source addresses are spread over K loopback
addresses (127.0.0.x), or one. Loopback only, bounded in phones, rate and time; it stops by itself and prints a JSON
summary: per phone what it made, sent, had acknowledged, resent, its reconnects and sessions; the send→ack latency
while sending and after; refused upgrades (status, body, Retry-After); the client's own CPU and lag.

    Tests/Load/web_phones.py --port 28080 --phones 40 --addresses 8 --rate 10 --seconds 20
    Tests/Load/web_phones.py --port 28080 --room 40:8:127.0.0.10 --room 40:1:127.0.0.100 --rate 10 --seconds 20

As a module: `summary = asyncio.run(run_phones(parse_arguments([...])))` (Benchmarks/phones_at_once.py does).
"""
import argparse, array, asyncio, collections, ipaddress, json, random, resource, sys, time

from web_phone import Phone

# Bounds of a run (house rule: load is bounded in count and time).
MAX_PHONES, MAX_RATE, MAX_SECONDS, MAX_DRAIN = 2000, 200, 1800, 600


class Run:
    """What all phones share: the clock's marks and the measurements (one process, one thread: no locks)."""

    def __init__(self, options):
        self.options = options
        self.start = time.monotonic() + 0.5
        self.send_end = self.start + options.ramp + options.seconds   # the last phone's sending ends here
        self.deadline = self.send_end + options.drain_timeout           # everything stops by here
        self.during = array.array("d")   # send→ack seconds of acks heard while their phone still sent
        self.after = array.array("d")    # ...and of those heard after it stopped (the drain)
        self.late = array.array("f")     # how late each 100 ms batch was made: the client's own lag
        self.refusals = collections.Counter()
        self.errors = collections.Counter()
        self.failures = collections.Counter()  # connections that failed before an answer
        self.phones = []


def percentiles(values):
    ordered = sorted(values)
    pick = lambda share: round(ordered[min(len(ordered) - 1, int(share * len(ordered)))] * 1000, 1)  # noqa: E731
    return {"count": len(ordered), "p50_ms": pick(0.5), "p99_ms": pick(0.99), "max_ms": round(ordered[-1] * 1000, 1)} \
        if ordered else {"count": 0}


async def progress(run, every):
    """A line on stderr every `every` s: a long run says how it goes."""
    while True:
        await asyncio.sleep(every)
        phones = run.phones
        print(f"web_phones: {time.monotonic() - run.start:6.0f} s  connected {sum(1 for p in phones if p.welcomed):4d}  "
              f"made {sum(p.made for p in phones):9d}  acked {sum(p.acked for p in phones):9d}  "
              f"refusals {sum(run.refusals.values())}  failures {sum(run.failures.values())}", file=sys.stderr, flush=True)


async def run_phones(options):
    """Runs the phones of `options` (parse_arguments) to the end; returns the summary (a dict)."""
    check(options)
    run = Run(options)
    rng = random.Random(options.seed)
    for room, (count, addresses, first) in enumerate(options.rooms):
        base = ipaddress.ip_address(first)
        run.phones += [Phone(run, room, index, str(base + index % addresses), random.Random(rng.random()))
                       for index in range(count)]
    cpu = resource.getrusage(resource.RUSAGE_SELF)
    reporter = asyncio.create_task(progress(run, options.progress)) if options.progress else None
    # The whole run is bounded: a phone that could not finish by the deadline is cut off and counted as such.
    await asyncio.wait([asyncio.create_task(phone.live()) for phone in run.phones], timeout=run.deadline - time.monotonic() + 30)
    if reporter:
        reporter.cancel()
    used = resource.getrusage(resource.RUSAGE_SELF)
    phones = [phone.summary() for phone in run.phones]
    return {
        "phones": len(phones), "rate": options.rate, "seconds": options.seconds, "drop": options.drop,
        "made": sum(p["made"] for p in phones), "acked": sum(p["acked"] for p in phones),
        "refused": sum(p["refused"] for p in phones), "unacked": sum(p["unacked"] for p in phones),
        "resent": sum(p["resent"] for p in phones), "reconnects": sum(p["reconnects"] for p in phones),
        "latency_while_sending": percentiles(run.during), "latency_after_sending": percentiles(run.after),
        "latency": percentiles(run.during + run.after), "batch_lateness": percentiles(run.late),
        "refusals": [{"status": s, "body": b, "retry_after": r, "count": n} for (s, b, r), n in run.refusals.most_common()],
        "errors": dict(run.errors.most_common(20)), "failures": dict(run.failures),
        "client_cpu_seconds": round(used.ru_utime + used.ru_stime - cpu.ru_utime - cpu.ru_stime, 2),
        "wall_seconds": round(time.monotonic() - run.start, 1), "per_phone": phones,
    }


def check(options):
    """The house rules for load: loopback only, bounded."""
    addresses = [options.host] + [str(ipaddress.ip_address(first) + addresses - 1) for _, addresses, first in options.rooms]
    if not all(ipaddress.ip_address(address) in ipaddress.ip_network("127.0.0.0/8") for address in [options.host] + addresses):
        raise SystemExit(f"web_phones: loopback (127.0.0.0/8) only, not {addresses}")
    if sum(count for count, _, _ in options.rooms) > MAX_PHONES or not 0 < options.rate <= MAX_RATE or \
            not 0 < options.seconds <= MAX_SECONDS or not 0 <= options.drain_timeout <= MAX_DRAIN:
        raise SystemExit(f"web_phones: at most {MAX_PHONES} phones, {MAX_RATE} events/s, {MAX_SECONDS} s, a drain of {MAX_DRAIN} s")


def parse_arguments(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1", help="muevald's console (or capture.web_listen) address")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--origin", default=None, help="the Origin header (default: the console's own origin)")
    parser.add_argument("--phones", type=int, default=40)
    parser.add_argument("--addresses", type=int, default=8, help="loopback source addresses the phones are spread over")
    parser.add_argument("--first-address", default="127.0.0.1")
    parser.add_argument("--room", action="append", default=[], metavar="PHONES:ADDRESSES:FIRST",
                        help="a group of phones (repeatable; instead of --phones/--addresses/--first-address)")
    parser.add_argument("--rate", type=float, default=20, help="events a second per phone")
    parser.add_argument("--seconds", type=float, default=20, help="how long each phone records and sends")
    parser.add_argument("--ramp", type=float, default=2, help="phones start at random moments within this many seconds")
    parser.add_argument("--drop", choices=["close", "reset", "silent", "mixed", "none"], default="mixed")
    parser.add_argument("--drain-timeout", type=float, default=60, help="seconds after sending to wait for the last acks")
    parser.add_argument("--seed", type=int, default=52)
    parser.add_argument("--first-seq", type=int, default=1)
    parser.add_argument("--device-prefix", default="web-phone")
    parser.add_argument("--app-id", default="load.webphones")
    parser.add_argument("--progress", type=float, default=0, help="a line on stderr every this many seconds (0: none)")
    parser.add_argument("--output", default="-", help="where the JSON summary goes (-: stdout)")
    options = parser.parse_args(argv)
    options.origin = options.origin or f"http://{options.host}:{options.port}"
    rooms = [spec.split(":") for spec in options.room] or [[options.phones, options.addresses, options.first_address]]
    options.rooms = [(int(count), max(1, int(addresses)), first) for count, addresses, first in rooms]
    return options


def raise_descriptor_limit():
    # Each phone holds a socket, and a silent drop one more until the end: 500 phones need more than the usual 1024.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def main(argv=None):
    options = parse_arguments(argv)
    raise_descriptor_limit()
    summary = asyncio.run(run_phones(options))
    text = json.dumps(summary, indent=1)
    if options.output == "-":
        print(text)
    else:
        with open(options.output, "w") as f:
            f.write(text + "\n")
    return 0 if summary["unacked"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
