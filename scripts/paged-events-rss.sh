#!/usr/bin/env bash
# muevald's peak RSS while `muevalctl events --limit 0` and `export` page through a large session
# (docs/CONTROL.md). Usage: scripts/paged-events-rss.sh [EVENTS] (default 1,000,000), after a build;
# BIN= the binaries' directory (default: .build/debug). Loopback only; removes what it made.
set -euo pipefail
cd "$(dirname "$0")/.."
EVENTS=${1:-1000000}
BIN=${BIN:-$PWD/.build/debug}
D=$(mktemp -d)
PORT=${PORT:-28977}
rss() { grep VmHWM "/proc/$1/status" | tr -s ' \t' ' '; }
start() {
    "$BIN/muevald" --data-dir "$D" --listen "127.0.0.1:$PORT" --no-zeroconf --socket "$D/c.sock" 2>>"$D/log" &
    P=$!
    for _ in $(seq 100); do "$BIN/muevalctl" --socket "$D/c.sock" status >/dev/null 2>&1 && return; sleep 0.1; done
    echo "muevald did not start: $(cat "$D/log")" >&2; exit 1
}
trap 'kill $P 2>/dev/null || true; rm -rf "$D"' EXIT
start
"$BIN/muevalctl" --socket "$D/c.sock" start --name big >/dev/null
# One device without hello, EVENTS touch events in 2,000-event writes.
python3 - "$PORT" "$EVENTS" <<'PY'
import socket, sys
port, count = int(sys.argv[1]), int(sys.argv[2])
s = socket.create_connection(('127.0.0.1', port))
chunk = []
for seq in range(1, count + 1):
    chunk.append(f'<event><key>class</key><string>UserInputEvent</string><key>seq</key><integer>{seq}</integer>'
                 f'<key>timestamp</key><real>{1700000000 + seq / 1000}</real><key>type</key><string>touch</string>'
                 f'<key>x</key><integer>{seq % 320}</integer><key>y</key><integer>{seq % 480}</integer>'
                 f'<key>view</key><string>PostsViewController</string></event>')
    if len(chunk) == 2000:
        s.sendall(''.join(chunk).encode()); chunk = []
if chunk: s.sendall(''.join(chunk).encode())
s.shutdown(socket.SHUT_WR)
while s.recv(65536): pass
PY
"$BIN/muevalctl" --socket "$D/c.sock" stop big >/dev/null
# A fresh daemon, so that the peak is the reading's, not the ingest's.
kill "$P"; wait "$P" || true
start
echo "session: $EVENTS events, $(du -h "$D/sessions/session-1.sqlite" | cut -f1); muevald after start: $(rss "$P")"
"$BIN/muevalctl" --socket "$D/c.sock" events big --limit 0 --json | wc -l | sed 's/^/events --limit 0 --json: lines /'
echo "  muevald peak: $(rss "$P")"
"$BIN/muevalctl" --socket "$D/c.sock" events big --limit 0 | wc -l | sed 's/^/events --limit 0 (table): lines /'
echo "  muevald peak: $(rss "$P")"
"$BIN/muevalctl" --socket "$D/c.sock" export big --format jsonl | wc -c | sed 's/^/export --format jsonl: bytes /'
echo "  muevald peak: $(rss "$P")"
