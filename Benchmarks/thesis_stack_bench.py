#!/usr/bin/python3
"""A thesis-style capture server, for `make bench` to measure muevald against (issue 41).

The muEvaluationFramework's CaptureServer (Nestler 2011, chapter 5) was Python: it read the XML
messages of a device's TCP stream into Python dicts and stored them. This plays that server with
Debian's /usr/bin/python3 and the standard library only (socket, xml.etree, json, sqlite3): each
socket read's complete messages are parsed, stored in one SQLite transaction (`synchronous = FULL`,
WAL, as muevald's default), and then acknowledged, so that the same sender (`muevalbench`) can wait
for every event to be durable exactly as it does with muevald. It speaks only what that needs of
docs/PROTOCOL.md: a `<welcome>` for a `<hello>`, an `<ack>` of the highest seq after each commit.

    thesis_stack_bench.py --port PORT --db FILE     (started by `muevalbench run --thesis-stack`)

It serves until SIGTERM, then prints what it measured itself: the events stored, events/s and CPU
per event from the first event to the last commit (getrusage, every thread).
"""

import argparse
import json
import resource
import selectors
import signal
import socket
import sqlite3
import sys
import time
import xml.etree.ElementTree as ET

WELCOME = b"<welcome><key>session</key><string>1</string><key>sensors</key><array/></welcome>\n"


def plist_value(element):
    """A property list value element as Python data, as the thesis's Event dict held it."""
    tag = element.tag
    text = element.text or ""
    if tag == "string":
        return text
    if tag == "integer":
        return int(text)
    if tag == "real":
        return float(text)
    if tag == "true":
        return True
    if tag == "false":
        return False
    if tag in ("date", "data"):
        return text.strip()
    if tag == "array":
        return [plist_value(child) for child in element]
    if tag == "dict":
        return plist_dict(element)
    raise ValueError("not a property list value: <%s>" % tag)


def plist_dict(element):
    """`<key>…</key>` value pairs (an `<event>`, a `<hello>`, a `<dict>`) as a dict."""
    children = list(element)
    return {children[i].text or "": plist_value(children[i + 1]) for i in range(0, len(children) - 1, 2)}


def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class Connection:
    """One device's stream: an XML pull parser over the messages, one level below a virtual root."""

    def __init__(self, sock, address):
        self.sock = sock
        self.parser = ET.XMLPullParser(events=("start", "end"))
        self.parser.feed(b"<stream>")
        self.root = None
        self.depth = 0
        self.device = "address:%s" % address

    def messages(self, data):
        """The messages completed by `data`, each dropped from the stream's root once handled."""
        self.parser.feed(data)
        for event, element in self.parser.read_events():
            if event == "start":
                if self.root is None:
                    self.root = element
                self.depth += 1
            else:
                self.depth -= 1
                if self.depth == 1:
                    yield element
                    self.root.remove(element)


class Server:
    def __init__(self, port, db):
        self.db = sqlite3.connect(db, isolation_level=None)
        self.db.execute("PRAGMA journal_mode = WAL")
        self.db.execute("PRAGMA synchronous = FULL")
        self.db.execute("""CREATE TABLE IF NOT EXISTS events (
            id INTEGER PRIMARY KEY, device TEXT NOT NULL, seq INTEGER, class TEXT NOT NULL,
            timestamp REAL, received REAL NOT NULL, payload TEXT NOT NULL)""")
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", port))
        self.listener.listen(64)
        self.listener.setblocking(False)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.listener, selectors.EVENT_READ)
        self.stored = 0
        self.first_event = None
        self.last_commit = None
        self.cpu_at_first_event = None
        self.cpu_at_last_commit = None

    def serve(self):
        while True:
            for key, _ in self.selector.select():
                if key.fileobj is self.listener:
                    self.accept()
                else:
                    self.read(key.data)

    def accept(self):
        try:
            sock, address = self.listener.accept()
        except BlockingIOError:
            return
        sock.setblocking(True)
        self.selector.register(sock, selectors.EVENT_READ, Connection(sock, address[0]))

    def read(self, connection):
        try:
            data = connection.sock.recv(65536)
        except ConnectionError:
            data = b""
        if not data:
            self.selector.unregister(connection.sock)
            connection.sock.close()
            return
        received = time.time()
        rows = []
        replies = []
        try:
            for message in connection.messages(data):
                if message.tag == "hello":
                    connection.device = str(plist_dict(message).get("deviceId", connection.device))
                    replies.append(WELCOME)
                elif message.tag == "event":
                    event = plist_dict(message)
                    timestamp = event.get("timestamp")
                    rows.append((connection.device, event.get("seq"), str(event.get("class", "")),
                                 timestamp if isinstance(timestamp, (int, float)) else None, received,
                                 json.dumps(event, separators=(",", ":"))))
        except (ET.ParseError, ValueError) as error:
            replies.append(b"<error><key>reason</key><string>malformed: %s</string></error>\n"
                           % str(error).encode().replace(b"<", b"&lt;"))
            self.selector.unregister(connection.sock)
            connection.sock.close()
            return
        if rows:
            if self.first_event is None:
                self.first_event = received
                self.cpu_at_first_event = cpu_seconds()
            # One transaction per batch (the socket read), committed before anything is acknowledged.
            self.db.execute("BEGIN")
            self.db.executemany("INSERT INTO events (device, seq, class, timestamp, received, payload) "
                                "VALUES (?, ?, ?, ?, ?, ?)", rows)
            self.db.execute("COMMIT")
            self.stored += len(rows)
            self.last_commit = time.time()
            self.cpu_at_last_commit = cpu_seconds()
            seqs = [row[1] for row in rows if isinstance(row[1], int)]
            if seqs:
                replies.append(b"<ack><key>seq</key><integer>%d</integer></ack>\n" % max(seqs))
        if replies:
            connection.sock.sendall(b"".join(replies))

    def summary(self):
        if not self.stored or self.last_commit is None or self.last_commit <= self.first_event:
            return "thesis stack: %d events stored" % self.stored
        seconds = self.last_commit - self.first_event
        cpu = self.cpu_at_last_commit - self.cpu_at_first_event
        return ("thesis stack: %d events stored, %.0f events/s, %.1f µs CPU per event "
                "(first event to last commit, %.2f s)" % (self.stored, self.stored / seconds, cpu / self.stored * 1e6, seconds))


def main():
    arguments = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    arguments.add_argument("--port", type=int, required=True)
    arguments.add_argument("--db", required=True, help="the SQLite file to store events in")
    options = arguments.parse_args()
    server = Server(options.port, options.db)

    def stop(*_):
        print(server.summary(), flush=True)
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    server.serve()


if __name__ == "__main__":
    main()
