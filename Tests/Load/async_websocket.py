"""An asyncio WebSocket client (RFC 6455) for hundreds of sockets in one process, from the standard library alone.

Tests/Browser/websocket_client.py is the blocking one (a thread per socket, which does not scale to 500 phones); this
one reuses its frame writer (masked client frames) and its GUID, and adds what a load of phones needs: a chosen source
address (a room of phones is many loopback addresses, or one), the refused upgrade's status, body and Retry-After
(issue 52 item 2 answers refusals with 429/503 and Retry-After), and the three ways a phone's socket dies without a
goodbye."""

import asyncio
import base64
import hashlib
import os
import socket
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Browser"))
from websocket_client import GUID, frame  # noqa: E402  (Tests/Browser is no package)

# The longest server frame read: muevald's replies are acks, welcomes and errors (a welcome with a study's tasks is the
# biggest); anything near this is a broken stream, not a reply.
MAX_SERVER_FRAME = 16 << 20


class Refused(Exception):
    """The upgrade was answered with other than 101: its status, body and Retry-After (seconds, or None)."""

    def __init__(self, status, body, retry_after):
        super().__init__(f"upgrade refused: {status} {body!r} (Retry-After: {retry_after})")
        self.status, self.body, self.retry_after = status, body, retry_after


class Closed(Exception):
    """The server closed the connection (a close frame, or the end of the stream)."""


def _retry_after(value):
    # An HTTP date is allowed too; muevald sends seconds, and a date here would be a server we do not measure.
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        return None


async def connect(host, port, path="/capture", origin=None, source=None, timeout=15.0):
    """Opens a WebSocket to ws://HOST:PORT/PATH from the local address `source` (any port); raises Refused for an
    answer other than 101, OSError or asyncio.TimeoutError for a connection that fails or hangs `timeout` s."""
    async def handshake():
        reader, writer = await asyncio.open_connection(host, port, local_addr=(source, 0) if source else None)
        try:
            writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            key = base64.b64encode(os.urandom(16)).decode()
            lines = [f"GET {path} HTTP/1.1", f"Host: {host}:{port}", "Upgrade: websocket", "Connection: Upgrade",
                     f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13"] + ([f"Origin: {origin}"] if origin else [])
            writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
            status = int(head.split(" ", 2)[1])
            headers = {name.strip().lower(): value.strip()
                       for name, _, value in (line.partition(":") for line in head.split("\r\n")[1:] if line)}
            if status != 101:
                length = int(headers.get("content-length", "0") or 0)
                body = b""
                if length:
                    try:
                        body = await reader.readexactly(min(length, 65536))
                    except asyncio.IncompleteReadError as partial:
                        body = partial.partial
                raise Refused(status, body.decode("utf-8", "replace"), _retry_after(headers.get("retry-after")))
            expected = base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()
            if headers.get("sec-websocket-accept") != expected:
                raise Closed(f"wrong Sec-WebSocket-Accept in {headers}")
            return AsyncWebSocket(reader, writer)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError, IndexError) as error:
            writer.transport.abort()
            raise Closed(f"no answer to the upgrade: {error!r}") from None
        except BaseException:
            writer.transport.abort()
            raise
    return await asyncio.wait_for(handshake(), timeout)


class AsyncWebSocket:
    def __init__(self, reader, writer):
        self.reader, self.writer = reader, writer

    def send_text(self, text):
        """Queues one text message; never waits (as a page's socket.send): `buffered` says how much is waiting. On a
        socket already closed it does nothing, as a page's closed socket (asyncio would warn at every write)."""
        if not self.writer.is_closing():
            self.writer.write(frame(0x1, text.encode()))

    @property
    def buffered(self):
        return self.writer.transport.get_write_buffer_size()

    async def receive(self):
        """The next text message; pings are answered on the way; raises Closed at a close frame or the stream's end."""
        try:
            while True:
                first, second = await self.reader.readexactly(2)
                length = second & 0x7F
                if length == 126:
                    length = struct.unpack("!H", await self.reader.readexactly(2))[0]
                elif length == 127:
                    length = struct.unpack("!Q", await self.reader.readexactly(8))[0]
                if length > MAX_SERVER_FRAME:
                    raise Closed(f"a server frame of {length} bytes")
                payload = await self.reader.readexactly(length)  # a server's frames are never masked
                opcode = first & 0x0F
                if opcode == 0x8:
                    raise Closed(f"close frame {payload[:2].hex()} {payload[2:].decode('utf-8', 'replace')}")
                if opcode == 0x9:
                    self.writer.write(frame(0xA, payload))
                elif opcode == 0x1:
                    return payload.decode("utf-8", "replace")
        except (asyncio.IncompleteReadError, ConnectionError) as error:
            raise Closed(f"the stream ended: {error!r}") from None

    def close(self):
        """The orderly end: a close frame (1000), then the socket; what was written is still sent first."""
        if not self.writer.is_closing():
            self.writer.write(frame(0x8, struct.pack("!H", 1000)))
            self.writer.close()

    def drop(self, kind):
        """Ends the socket as a phone's dies, without a goodbye or a close frame. `close`: a FIN (a page's tab killed);
        `reset`: an RST (an address gone from under it); `silent`: nothing at all (a phone off the network): the
        socket is left open and unread, so that the server sees the drop only by its own pings; the caller keeps
        it and calls `abort()` at the end."""
        if kind == "silent":
            self.writer.transport.pause_reading()
            return
        if kind == "reset":
            self.writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.writer.transport.abort()

    def abort(self):
        self.writer.transport.abort()
