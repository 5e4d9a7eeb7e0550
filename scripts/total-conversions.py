#!/usr/bin/env python3
"""No trapping conversion of a number in Sources (docs/REPORTS.md, "Absurd numbers").

    scripts/total-conversions.py    lists each conversion that can trap, with the fix; exit 1 if any

Swift traps on `Int(someDouble)` when the Double is NaN, infinite or out of range, and on `Int32(someInt)`
when the value does not fit. Numbers from a device, a file or a browser reach such conversions, so every
one goes through the total helpers of Sources/WireProtocol/TotalConversion.swift (`Int(checked:)`,
`Int(saturating:)`) or the standard library's non-trapping initialisers (`exactly:`, `clamping:`,
`truncatingIfNeeded:`). `make test` runs this check.

A grep cannot know types: it flags
- an integer initialiser (`Int(`, `Int64(`, `UInt8(`, `time_t(`…) whose argument looks like a Double: a
  float literal, `Double(`, `.rounded(`, or a name declared as `Double` (in the same file, or as a
  property anywhere in Sources);
- a conversion to an integer narrower than `Int` (`Int32(`, `UInt16(`…) whose argument is not a literal or
  a C constant: it traps on a value that does not fit.
Unchecked `+ 1` on a parsed integer and ranges from untrusted bounds are beyond a grep: the fuzz targets
(docs/FUZZING.md) cover them. A conversion that is safe for a reason the grep cannot see goes into
ALLOWED, with the reason; keep that list short by converting instead.
"""
import glob, os, re, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Targets that never read a number from outside: the simulator and test support make their own data,
# the benchmarks measure it.
EXEMPT_TARGETS = {
    'DeviceSimulator': 'generates the simulated phones\' own events and media',
    'DaemonTestSupport': 'test support: drives muevald with values the tests choose',
    'SessionAnalysisTestSupport': 'test support: writes journals with values the tests choose',
    'SpeechBenchmark': 'benchmark on its own recordings',
    'ReportBenchmark': 'benchmark on its own sessions',
    'muevalsim': 'the simulator\'s command line',
}

# Reviewed conversions the grep cannot tell apart from trapping ones: (file, snippet) -> reason.
ALLOWED = {
    ('Sources/CaptureServer/DeviceConnectionHandler.swift', 'Int64(configuration.helloTimeout * 1e9)'):
        'server.hello_timeout is checked to be 0…86,400 s when the configuration is read (DaemonConfiguration)',
    ('Sources/CaptureServer/DeviceConnectionHandler.swift', 'Int(configuration.helloTimeout)'):
        'server.hello_timeout is checked to be 0…86,400 s when the configuration is read (DaemonConfiguration)',
    ('Sources/ConsoleServer/ConsoleServer.swift', 'Int64(limits.idleTimeout * 1e9)'):
        'console.idle_timeout is checked to be 0…86,400 s when the configuration is read (DaemonConfiguration)',
    ('Sources/ConsoleServer/ConsoleServer.swift', 'Int64(limits.webSocketPing * 1e9)'):
        'console.websocket_ping is checked to be 0…86,400 s when the configuration is read (DaemonConfiguration)',
    ('Sources/ConsoleServer/ConsoleConnections.swift', 'Int64(seconds * 1e9)'):
        'one of console.header_timeout and console.tls_handshake_timeout, checked to be 0…86,400 s when the configuration is read',
    ('Sources/CaptureServer/CaptureServer.swift', 'Int64(configuration.idleTimeout * 1000)'):
        'server.idle_timeout is checked to be 0…86,400 s when the configuration is read (DaemonConfiguration)',
    ('Sources/CaptureServer/DeviceConnectionHandler.swift', 'Int(configuration.idleTimeout)'):
        'server.idle_timeout is checked to be 0…86,400 s when the configuration is read (DaemonConfiguration)',
    ('Sources/CaptureServer/CommitRouter.swift', 'Int(report.committedAt - ended.since)'):
        'two readings of the server\'s own clock, seconds apart',
    ('Sources/Replication/PostgresReplicator.swift', 'Int64(min(settings.timeout, 30))'):
        'storage.postgres.timeout is checked to be 1…3,600 s when the configuration is read (DaemonConfiguration)',
    ('CaptureLibrary/Sources/MuEvalWire/ISO8601.swift', 'Int(((t - whole) * 1_000_000).rounded())'):
        't is clamped to years 0000–9999 (NaN to 0) on the line before: a fraction of a second',
    ('CaptureLibrary/Sources/MuEvalWire/ISO8601.swift', 'Int(whole)'):
        't is clamped to years 0000–9999 (NaN to 0): whole seconds within ±3×10¹¹',
    ('Sources/WireProtocol/JSONString.swift', 'Int64(value)'):
        'guarded on the line before: a whole number below 10¹⁵',
    ('Sources/WireProtocol/PayloadSummary.swift', 'Int64(value)'):
        'guarded in the same expression: a whole number below 10¹⁵',
    ('CaptureLibrary/Sources/MuEvalWire/Base64.swift', 'UInt8(value)'): 'the index in the 64-letter alphabet',
    ('CaptureLibrary/Sources/MuEvalWire/Base64.swift', 'UInt32(value)'): 'a sextet (below 64) from the decoding table',
    ('Sources/WireProtocol/UTF8Validation.swift', 'UInt8(scalar)'): 'in the `case ..<0x80` branch: ASCII',
    ('Sources/ControlService/ControlAccess.swift', 'socklen_t(groups.count * MemoryLayout<UInt32>.size)'):
        'the buffer of supplementary groups, grown to what the kernel asks (at most NGROUPS_MAX, 65,536)',
    ('Sources/Daemon/SystemdNotifier.swift', 'Int32($0)'): 'parses $WATCHDOG_PID text: failable, no trap',
    ('Sources/Daemon/SystemdNotifier.swift', 'socklen_t(MemoryLayout<sa_family_t>.size + address.count + (address.first == 0 ? 0 : 1))'):
        'address is checked shorter than sun_path (108 bytes) just before',
    ('Sources/Zeroconf/ZeroconfService.swift', 'UInt16(port)'): 'the port muevald\'s capture listener is bound to (0…65,535)',
    ('Sources/SpeechRecognition/PocketSphinxDecoder.swift', 'Int32(argv.count)'): 'a fixed argument list of a dozen options',
    ('Sources/QRCode/QRCode.swift', 'Int(symbol.pointee.width)'): 'libqrencode\'s C int symbol width (21…177): widening, no trap',
    ('Sources/TesterPool/QuotaSampler.swift', 'UInt64($1)'): 'a hash byte (UInt8) widened into the rank: cannot trap',
    ('CaptureLibrary/Sources/MuEvalCapture/CaptureConfiguration.swift', 'Int32(buffer.count)'): 'a 64-byte buffer',
    ('CaptureLibrary/Sources/MuEvalCapture/CaptureSpool.swift', 'UInt32(message.bytes.count)'):
        'a message the library encoded itself, bounded by its limits.maxMessageBytes',
    # The capture library runs in the app: its timeouts and clock are the app's, not received data.
    ('CaptureLibrary/Sources/MuEvalCapture/CaptureManager.swift', 'Int64(wall * 1e6)'): 'the phone\'s own wall clock, seconds since 1970',
    ('CaptureLibrary/Sources/MuEvalCapture/WaitTime.swift', 'Int64(min(seconds, 86_400) * 1e9)'):
        'guarded: seconds > 0 excludes NaN and negatives, min caps inf and 1e300 at a day',
}

INTEGER_TYPES = r'(?:U?Int(?:8|16|32|64)?|time_t|off_t|pid_t|uid_t|gid_t|mode_t|size_t|ssize_t|socklen_t|CInt|CLong|CUnsignedInt)'
NARROW = re.compile(r'^(?:U?Int(?:8|16|32)|UInt|UInt64|CInt|CUnsignedInt|mode_t|uid_t|gid_t|pid_t|socklen_t)$')
CALL = re.compile(r'(?<![\w.])(' + INTEGER_TYPES + r')\(')
# Initialisers that cannot trap (or parse text and return nil).
SAFE_LABELS = re.compile(r'^\s*(checked|saturating|exactly|clamping|truncatingIfNeeded|bitPattern|ascii|littleEndian|bigEndian|nan)\s*:')
DOUBLE_TYPE = r'(?:Double|TimeInterval|Float|CGFloat|Float32|Float64)'
FLOAT_LITERAL = re.compile(r'(?<![\w.])\d[\d_]*(?:\.\d[\d_]*(?:[eE][-+]?\d+)?|[eE][-+]?\d+)(?!\w)')
DOUBLE_TOKENS = re.compile(r'\b' + DOUBLE_TYPE + r'\(|\.rounded\(|\.squareRoot\(|\.timeIntervalSince|\.pi\b|\.infinity\b|\.nan\b|'
                           r'\b(?:sqrt|log|log2|log10|exp|pow|floor|ceil|fmod)\(')
# A literal, a C constant (`SQLITE_OK`, `SOCK_STREAM.rawValue`), or a sum of them.
CONSTANT = re.compile(r'^(?:[\s()|&+\-*0-9_]|0x[0-9A-Fa-f_]+|\bInt(?:32)?\(|\b[A-Z][A-Z0-9_]+(?:\.rawValue)?)*$')
# What fits by construction: a byte (`byte`, `bytes[i]`, a digit `b - ASCII.zero`), a value masked or shifted
# into range (`scalar & 0x3F`, `0xE0 | scalar >> 12`), a type's size (`MemoryLayout<T>.size`).
FITS = re.compile(r'^(?:bytes?|b|p|digit)(?:\[[^\]]*\])?(?:\s*&?-\s*(?:ASCII\.\w+|0x[0-9A-Fa-f]+)(?:\s*\+\s*\d+)?)?$'
                  r'|&\s*(?:0x[0-9A-Fa-f]+|\d+)\s*\)?\s*$|^0x[0-9A-Fa-f]+\s*\|\s*\w+\s*>>\s*\d+$|^MemoryLayout<\w+>\.size$')
DECLARED = re.compile(r'\b(?:let|var)\s+(\w+)\s*:\s*' + DOUBLE_TYPE + r'\b\??|[(,]\s*(?:_\s+)?(\w+)\s*:\s*(?:inout\s+)?' + DOUBLE_TYPE + r'\b\??')
ASSIGNED = re.compile(r'\b(?:let|var)\s+(\w+)\s*=\s*([^\n]+)')
PROPERTY = re.compile(r'^\s*(?:(?:public|internal|package|private|fileprivate|static|private\(set\)|public\(set\))\s+)*(?:let|var)\s+(\w+)\s*:\s*' + DOUBLE_TYPE + r'\b', re.M)
COMMENT = re.compile(r'//.*$', re.M)


def source_files():
    """The main package's sources and the capture library's (CaptureLibrary/)."""
    for sources in (os.path.join(ROOT, 'Sources'), os.path.join(ROOT, 'CaptureLibrary', 'Sources')):
        for path in sorted(glob.glob(os.path.join(sources, '**', '*.swift'), recursive=True)):
            target = os.path.relpath(path, sources).split(os.sep)[0]
            if target not in EXEMPT_TARGETS:
                yield path


def strip(text):
    """The code without comments and without the text of string literals; interpolations (`\\(…)`) stay
    code, and every character keeps its line."""
    out, i, n = [], 0, len(text)
    # A stack of what encloses position i: ('string', closing delimiter, raw hashes) or ('code', depth).
    stack = [('code', 0)]
    while i < n:
        c = text[i]
        top = stack[-1]
        if top[0] == 'code':
            if text.startswith('//', i):
                end = text.find('\n', i)
                i = n if end < 0 else end
                continue
            if text.startswith('/*', i):
                end = text.find('*/', i)
                end = n if end < 0 else end + 2
                out.append(re.sub(r'[^\n]', ' ', text[i:end]))
                i = end
                continue
            match = re.match(r'(#*)("""|")', text[i:i + 12])
            if match:
                stack.append(('string', match.group(2) + match.group(1), match.group(1)))
                out.append(match.group(0))
                i += len(match.group(0))
                continue
            if c == '(':
                stack[-1] = ('code', top[1] + 1)
            elif c == ')':
                if top[1] == 0 and len(stack) > 1:
                    stack.pop()  # the end of an interpolation
                else:
                    stack[-1] = ('code', top[1] - 1)
            out.append(c)
            i += 1
        else:
            _, closing, hashes = top
            if text.startswith(closing, i):
                stack.pop()
                out.append(closing)
                i += len(closing)
            elif text.startswith('\\' + hashes + '(', i):
                stack.append(('code', 0))
                out.append(' ' * (len(hashes) + 1) + '(')
                i += len(hashes) + 2
            elif c == '\\' and not hashes:
                out.append('  ' if text[i + 1:i + 2] != '\n' else ' \n')
                i += 2
            else:
                out.append(c if c == '\n' else ' ')
                i += 1
    return ''.join(out)


def argument(text, start):
    """The text between the parenthesis at `start` and its match."""
    depth = 0
    for index in range(start, len(text)):
        if text[index] == '(':
            depth += 1
        elif text[index] == ')':
            depth -= 1
            if depth == 0:
                return text[start + 1:index]
    return text[start + 1:]


def double_names(text):
    """Names the file declares as Doubles, or binds to a Double expression."""
    names = {a or b for a, b in DECLARED.findall(text)}
    # `let n = Int(checked: x)` is an integer, whatever x is.
    assignments = [(name, value) for name, value in ASSIGNED.findall(text) if not CALL.match(value.strip())]
    while True:
        grown = {name for name, value in assignments if name not in names and looks_double(value, names, set())}
        if not grown:
            return names
        names |= grown


def looks_double(expression, local, members):
    if FLOAT_LITERAL.search(expression) or DOUBLE_TOKENS.search(expression):
        return True
    for match in re.finditer(r'(\.)?\b([A-Za-z_]\w*)\b(?!\s*[(:])', expression):
        member, name = match.group(1), match.group(2)
        if (member and name in members) or (not member and name in local):
            return True
    return False


def main():
    files = list(source_files())
    members = set()
    for path in files:
        members.update(PROPERTY.findall(strip(open(path).read())))
    # Names that are as often something else: a member named so says nothing of its type.
    members -= {'count', 'id', 'value', 'number', 'offset', 'length', 'size', 'index', 'seq', 'part'}
    findings, used = [], set()
    for path in files:
        relative = os.path.relpath(path, ROOT)
        text = strip(open(path).read())
        local = double_names(text)
        lines = open(path).read().split('\n')
        for match in CALL.finditer(text):
            open_paren = match.end() - 1
            arg = argument(text, open_paren)
            if SAFE_LABELS.match(arg) or re.match(r'^[^,]+,\s*radix\s*:', arg):
                continue
            kind = match.group(1)
            line = text.count('\n', 0, match.start()) + 1
            source = lines[line - 1].strip()
            snippet = f'{kind}({arg.strip()})'
            if (relative, snippet) in ALLOWED:
                used.add((relative, snippet))
                continue
            if looks_double(arg, local, members):
                findings.append((relative, line, snippet, 'a Double here traps on NaN, ±inf and out of range: '
                                 f'use {kind}(checked:) (nil for those) or {kind}(saturating:) (for display)'))
            elif NARROW.match(kind) and not CONSTANT.match(arg.strip()) and not FITS.search(arg.strip()):
                findings.append((relative, line, snippet, f'traps when the value does not fit: use {kind}(exactly:) or '
                                 f'{kind}(clamping:), or {kind}(truncatingIfNeeded:) for bit patterns'))
    for relative, line, snippet, fix in findings:
        print(f'{relative}:{line}: {snippet}: {fix}')
    stale = set(ALLOWED) - used
    for relative, snippet in sorted(stale):
        print(f'scripts/total-conversions.py: ALLOWED lists {relative}: {snippet}, which is no longer there: remove it')
    if findings or stale:
        print(f'{len(findings)} conversion(s) that can trap (docs/REPORTS.md, "Absurd numbers"); '
              'a reviewed safe one goes into ALLOWED in scripts/total-conversions.py, with its reason')
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
