"""One web phone of Tests/Load/web_phones.py: its WebSocket to muevald's /capture, kept as capture.js keeps it.

It records R touch events a second in batches of 100 ms (capture.js's BATCH_MS) whether connected or not, says hello
with its own deviceId, sends after the welcome what it recorded in seq order, and settles what each cumulative <ack>
covers. Once, at a seeded random moment, its socket dies without a goodbye; it reconnects with capture.js's backoff,
says hello again and resends everything not acknowledged, in seq order. A refused upgrade is retried after its
Retry-After (else the backoff). When its time is over it waits for the last ack, says <goodbye/> and closes."""
import asyncio, collections, re, time

from async_websocket import Closed, Refused, connect
from phone_events import touch

# capture.js's numbers (CaptureLibrary/Web/capture/constants.js), so that the server sees what phones do.
BATCH_S = 0.1               # BATCH_MS: what is recorded within it goes out in one message
BACKOFF_FIRST, BACKOFF_LAST = 0.5, 30.0  # DELIVERY.reconnectFirstMs/LastMs, jitter over the second half
ACK_TIMEOUT_S = 15.0        # DELIVERY.ackTimeoutMs: no ack for what is in flight this long, the socket is dead
PROBE_AFTER_S = 25.0        # DELIVERY.probeAfterMs: nothing heard this long, the hello again as a probe
PROBE_TIMEOUT_S = 10.0      # DELIVERY.probeTimeoutMs: a probe unanswered this long, the socket is dead
CONNECT_TIMEOUT_S = 15.0    # DELIVERY.connectTimeoutMs
RANGE_RETRY_S = 5.0         # DELIVERY.rangeRetryMs: after a refused group commit, everything again after this
MAX_BUFFERED = 1 << 20      # DELIVERY.maxBufferedBytes: above it, sending waits
FRAME_CHARS = 65536         # FRAME_BATCH_CHARS: messages per text frame

ACK = re.compile(r"<ack><key>seq</key><integer>(\d+)</integer></ack>")
SESSION = re.compile(r"<welcome>.*?<key>session</key><string>([^<]*)</string>", re.S)
ERROR = re.compile(r"<error>(.*?)</error>", re.S)
REASON = re.compile(r"<key>reason</key><string>([^<]*)</string>")
SEQ = re.compile(r"<key>seq</key><integer>(\d+)</integer>")
FROM_SEQ = re.compile(r"<key>fromSeq</key><integer>(\d+)</integer>")


def jittered(delay, rng):
    return delay / 2 + rng.random() * delay / 2


class Phone:
    def __init__(self, run, room, index, address, rng):
        o = run.options
        self.run, self.rng, self.address, self.room = run, rng, address, room
        self.device = f"{o.device_prefix}-r{room}-{index:04d}"
        self.begin = run.start + rng.random() * o.ramp
        self.end = self.begin + o.seconds
        self.drop_kind = rng.choice(["close", "reset", "silent"]) if o.drop == "mixed" else o.drop
        self.drop_at = None if o.drop == "none" else self.begin + o.seconds * (0.1 + 0.8 * rng.random())
        self.queued = collections.deque()    # [seq, xml, made, sent, sends]: not sent on this connection, seq order
        self.inflight = collections.deque()  # sent on this connection, not acknowledged, seq order
        self.next_seq = o.first_seq
        self.made = self.sent = self.resent = self.acked = self.refused = 0
        self.connections = self.welcomes = 0
        self.sessions = []
        self.hello_refusals = self.refusals = self.failures = 0
        self.ws = None
        self.welcomed = self.sending_done = self.range_refused = False
        # delivery.js's clocks: when this connection last heard anything, since when it waits for an ack (None: it
        # waits for none), and since when a probe is unanswered.
        self.heard = self.awaiting_since = self.probing_since = None
        self.dropped_at = None
        self.abandoned = []
        self.goodbye = "none"

    # ---------------------------------------------------------------- recording and sending

    async def record(self):
        """Every 100 ms, the events due by now (R a second, whether connected or not), then a send."""
        rate, made = self.run.options.rate, 0
        tick = 0
        while True:
            tick += 1
            due = self.begin + tick * BATCH_S
            if due > self.end:
                break
            await asyncio.sleep(max(0.0, due - time.monotonic()))
            now = time.monotonic()
            self.run.late.append(now - due)
            target = int(rate * (min(now, self.end) - self.begin))
            wall = time.time()
            for _ in range(target - made):
                self.queued.append([self.next_seq, touch(self.next_seq, wall), now, None, 0])
                self.next_seq += 1
            self.made += target - made
            made = target
            self.flush()
            # Right after a send: what it carried is in flight, unacknowledged, maybe stored, and must go again.
            if self.drop_at is not None and self.dropped_at is None and now >= self.drop_at and self.ws:
                self.drop()
        self.sending_done = True

    def flush(self):
        """Sends what is queued, in seq order, in text messages of up to 64 KB, while the socket's buffer allows."""
        ws = self.ws
        if not ws or not self.welcomed:
            return
        while self.queued and ws.buffered < MAX_BUFFERED:
            now, parts, size = time.monotonic(), [], 0
            while self.queued and size < FRAME_CHARS:
                item = self.queued.popleft()
                if item[4]:
                    self.resent += 1
                else:
                    self.sent += 1
                item[3] = now
                item[4] += 1
                parts.append(item[1])
                size += len(item[1])
                if not self.inflight:
                    self.awaiting_since = now
                self.inflight.append(item)
            ws.send_text("".join(parts))

    def drop(self):
        """The socket dies without a goodbye; what it carried unacknowledged goes again on the next one."""
        ws, self.ws, self.welcomed = self.ws, None, False
        self.dropped_at = time.monotonic()
        ws.drop(self.drop_kind)
        if self.drop_kind == "silent":
            self.abandoned.append(ws)

    # ---------------------------------------------------------------- what the server says

    def hear(self, text):
        self.heard, self.probing_since = time.monotonic(), None
        if "<welcome>" in text:
            self.welcomed = True
            self.welcomes += 1
            session = SESSION.search(text)
            if session and session.group(1) not in self.sessions:
                self.sessions.append(session.group(1))
        for ack in ACK.finditer(text):
            self.settle(int(ack.group(1)))
        for error in ERROR.finditer(text):
            self.refusal(error.group(1))
        self.flush()

    def settle(self, seq):
        now = time.monotonic()
        latencies = self.run.during if now <= self.end else self.run.after
        settled = 0
        while self.inflight and self.inflight[0][0] <= seq:
            item = self.inflight.popleft()
            latencies.append(now - item[3])
            settled += 1
        self.acked += settled
        if settled:
            self.awaiting_since = self.heard if self.inflight else None

    def refusal(self, body):
        reason = REASON.search(body)
        self.run.errors[reason.group(1) if reason else body[:200]] += 1
        seq, first = SEQ.search(body), FROM_SEQ.search(body)
        if not self.welcomed:
            self.hello_refusals += 1   # the hello refused: nothing is sent until a session takes the device
        elif first:
            self.range_refused = True  # a failed group commit: later acks do not cover it; all again after 5 s
            ws, self.ws = self.ws, None
            ws.abort()
        elif seq:
            kept = [item for item in self.inflight if item[0] != int(seq.group(1))]
            self.refused += len(self.inflight) - len(kept)
            self.inflight = collections.deque(kept)

    # ---------------------------------------------------------------- the connection's life

    async def live(self):
        recording = asyncio.create_task(self.record())
        backoff = BACKOFF_FIRST
        while time.monotonic() < self.run.deadline and self.goodbye == "none":
            options = self.run.options
            try:
                ws = await connect(options.host, options.port, "/capture", options.origin, self.address, CONNECT_TIMEOUT_S)
            except Refused as refused:
                self.run.refusals[(refused.status, refused.body, refused.retry_after)] += 1
                self.refusals += 1
                await asyncio.sleep(refused.retry_after + self.rng.random() if refused.retry_after is not None
                                    else jittered(backoff, self.rng))
                backoff = min(backoff * 2, BACKOFF_LAST)
                continue
            except (OSError, asyncio.TimeoutError, Closed) as error:
                self.run.failures[type(error).__name__] += 1
                self.failures += 1
                await asyncio.sleep(jittered(backoff, self.rng))
                backoff = min(backoff * 2, BACKOFF_LAST)
                continue
            self.connections += 1
            ended = await self.converse(ws)
            if ended == "welcomed":
                backoff = BACKOFF_FIRST
            if self.goodbye == "none":
                await asyncio.sleep(RANGE_RETRY_S if self.range_refused else jittered(backoff, self.rng))
                self.range_refused = False
                backoff = min(backoff * 2, BACKOFF_LAST)
        recording.cancel()
        for ws in self.abandoned:
            ws.abort()

    async def converse(self, ws):
        """One connection: hello, welcome, everything unacknowledged again, until it ends or the goodbye."""
        self.ws, self.welcomed = ws, False
        self.queued.extendleft(reversed(self.inflight))  # the last socket's unacknowledged first, in seq order
        self.inflight.clear()
        self.heard, self.awaiting_since, self.probing_since = time.monotonic(), None, None
        ws.send_text(self.hello())
        reader = asyncio.create_task(self.read(ws))
        was_welcomed = False
        try:
            while True:
                done, _ = await asyncio.wait({reader}, timeout=0.5)
                was_welcomed = was_welcomed or self.welcomed
                ended = "welcomed" if was_welcomed else "closed"
                now = time.monotonic()
                if done or self.ws is not ws or now > self.run.deadline:
                    return ended
                # As delivery.js: a hello unanswered waits (a session may take the device later); once welcomed, no
                # ack for 15 s or no answer to a probe for 10 s is a dead socket; 25 s of silence, a probe.
                if self.welcomed and (self.awaiting_since is not None and now - self.awaiting_since >= ACK_TIMEOUT_S or
                                      self.probing_since is not None and now - self.probing_since >= PROBE_TIMEOUT_S):
                    self.run.failures["no ack for 15 s" if self.probing_since is None else "no answer to a probe"] += 1
                    self.failures += 1
                    return ended
                if self.welcomed and self.probing_since is None and now - self.heard >= PROBE_AFTER_S:
                    self.probing_since = now
                    ws.send_text(self.hello())
                all_acked = self.sending_done and self.welcomed and not self.queued and not self.inflight
                if all_acked or self.sending_done and now > max(self.end, self.run.deadline - 5):
                    self.goodbye = "after every ack" if all_acked else "at the deadline"
                    ws.send_text("<goodbye/>\n")
                    ws.close()
                    await asyncio.wait({reader}, timeout=5)  # the server's close frame, or its end of the stream
                    return "welcomed"
        finally:
            reader.cancel()
            if self.ws is ws:
                self.ws, self.welcomed = None, False
            if ws not in self.abandoned:
                ws.abort()

    def hello(self):
        """capture.js's hello (web-capture.js) as Chrome on an Android phone says it."""
        return (f"<hello><key>protocolVersion</key><integer>1</integer><key>deviceId</key><string>{self.device}</string>"
                "<key>deviceName</key><string>Chrome on Android</string><key>model</key><string>Android</string>"
                "<key>systemVersion</key><string>Android 14</string><key>screenWidth</key><integer>412</integer>"
                "<key>screenHeight</key><integer>915</integer><key>screenScale</key><real>2.625</real>"
                f"<key>appId</key><string>{self.run.options.app_id}</string><key>appVersion</key><string>1</string></hello>\n")

    async def read(self, ws):
        try:
            while True:
                text = await ws.receive()
                if self.ws is not ws:
                    return   # a dropped socket's late replies are not the phone's any more
                self.hear(text)
        except Closed:
            return

    def summary(self):
        return {"device": self.device, "room": self.room, "address": self.address, "made": self.made, "sent": self.sent,
                "acked": self.acked, "refused": self.refused, "unacked": self.made - self.acked - self.refused,
                "resent": self.resent, "first_seq": self.run.options.first_seq, "last_seq": self.next_seq - 1,
                "connections": self.connections, "reconnects": max(0, self.connections - 1), "welcomes": self.welcomes,
                "sessions": self.sessions, "drop": self.drop_kind if self.dropped_at else "none",
                "refusals": self.refusals, "failures": self.failures, "hello_refusals": self.hello_refusals,
                "goodbye": self.goodbye}

