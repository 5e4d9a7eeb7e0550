"""A minimal WebSocket client (RFC 6455) from the standard library alone: no websocket package is installed
here. Text frames only, client frames masked as the RFC requires; enough to speak muevald's /capture
endpoint as a browser would (Tests/Browser/webcapture_browser.py's refusals, Benchmarks/web_capture_bench.py)."""

import base64
import hashlib
import os
import socket
import ssl
import struct

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class Refused(Exception):
    """The server answered the upgrade with other than 101: its status line and body."""

    def __init__(self, status, text):
        super().__init__(f"upgrade refused: {status} {text!r}")
        self.status = status
        self.text = text


class Closed(Exception):
    pass


def mask(payload, key):
    # XOR as one big integer: a byte-wise Python loop would cost the benchmark more than the server does.
    count = len(payload)
    repeated = (key * (count // 4 + 1))[:count]
    return (int.from_bytes(payload, "little") ^ int.from_bytes(repeated, "little")).to_bytes(count, "little")


def frame(opcode, payload):
    """One final, masked client frame."""
    head = bytes([0x80 | opcode])
    length = len(payload)
    if length < 126:
        head += bytes([0x80 | length])
    elif length < 1 << 16:
        head += bytes([0x80 | 126]) + struct.pack("!H", length)
    else:
        head += bytes([0x80 | 127]) + struct.pack("!Q", length)
    key = os.urandom(4)
    return head + key + mask(payload, key)


class WebSocket:
    """`url`: ws://HOST:PORT/PATH or wss://…; `origin`: the Origin header a browser would send (None: none);
    `cafile`: the CA a wss:// server's certificate is checked against."""

    def __init__(self, url, origin=None, cafile=None, timeout=10):
        scheme, rest = url.split("://", 1)
        authority, _, path = rest.partition("/")
        host, _, port = authority.rpartition(":")
        raw = socket.create_connection((host, int(port)), timeout=timeout)
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if scheme == "wss":
            context = ssl.create_default_context(cafile=cafile)
            raw = context.wrap_socket(raw, server_hostname=host)
        self.socket = raw
        self.buffer = b""
        key = base64.b64encode(os.urandom(16)).decode()
        lines = [f"GET /{path} HTTP/1.1", f"Host: {authority}", "Upgrade: websocket", "Connection: Upgrade",
                 f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13"]
        if origin:
            lines.append(f"Origin: {origin}")
        self.socket.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        head = self._until(b"\r\n\r\n").decode("latin-1")
        status = int(head.split(" ", 2)[1])
        headers = {name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in head.split("\r\n")[1:])}
        if status != 101:
            length = int(headers.get("content-length", "0"))
            body = self._exactly(length).decode("utf-8", "replace") if length else ""
            self.socket.close()
            raise Refused(status, body)
        expected = base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()
        if headers.get("sec-websocket-accept") != expected:
            raise Closed(f"wrong Sec-WebSocket-Accept: {headers}")

    def _fill(self):
        data = self.socket.recv(65536)
        if not data:
            raise Closed("the server closed the connection")
        self.buffer += data

    def _until(self, marker):
        while marker not in self.buffer:
            self._fill()
        head, _, self.buffer = self.buffer.partition(marker)
        return head

    def _exactly(self, count):
        while len(self.buffer) < count:
            self._fill()
        data, self.buffer = self.buffer[:count], self.buffer[count:]
        return data

    def send(self, text):
        self.socket.sendall(frame(0x1, text.encode()))

    def receive(self):
        """The next text message (pings answered on the way); raises Closed at a close frame."""
        while True:
            first, second = self._exactly(2)
            length = second & 0x7F
            if length == 126:
                length = struct.unpack("!H", self._exactly(2))[0]
            elif length == 127:
                length = struct.unpack("!Q", self._exactly(8))[0]
            payload = self._exactly(length)  # server frames are never masked
            opcode = first & 0x0F
            if opcode == 0x8:
                raise Closed(f"close frame {payload[:2].hex()} {payload[2:].decode('utf-8', 'replace')}")
            if opcode == 0x9:
                self.socket.sendall(frame(0xA, payload))
            elif opcode == 0x1:
                return payload.decode()

    def close(self):
        try:
            self.socket.sendall(frame(0x8, struct.pack("!H", 1000)))
        except OSError:
            pass
        self.socket.close()
