#!/usr/bin/env python3
"""Package.swift declares exactly what each target imports.

    scripts/package-imports.py          check: lists every target whose dependencies differ, exit 1
    scripts/package-imports.py --write [TARGET…]  rewrites the targets' `dependencies:` lists from the
                                                  imports (all, or the targets named)

It checks the main package and the capture library's own (CaptureLibrary/), which the main one uses
by path: there, its modules are targets; here, products of that package.

`make test` runs the check, so that a module cannot use another one that Package.swift does not
name (SwiftPM builds it anyway when something else pulls it in), nor name one it never imports.
"""
import glob, os, re, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Products of other packages, by the module a file imports.
PRODUCTS = {
    'DequeModule': 'swift-collections', 'OrderedCollections': 'swift-collections',
    'NIOConcurrencyHelpers': 'swift-nio', 'NIOCore': 'swift-nio', 'NIOPosix': 'swift-nio', 'NIOEmbedded': 'swift-nio',
    'NIOExtras': 'swift-nio-extras', 'Logging': 'swift-log',
    'ServiceLifecycle': 'swift-service-lifecycle', 'UnixSignals': 'swift-service-lifecycle',
    'ArgumentParser': 'swift-argument-parser', 'Crypto': 'swift-crypto', 'TOMLKit': 'TOMLKit',
    'NIOWebSocket': 'swift-nio', 'NIOTLS': 'swift-nio', 'NIOSSL': 'swift-nio-ssl', 'HTTPTypes': 'swift-http-types',
    'Hummingbird': 'hummingbird', 'HummingbirdCore': 'hummingbird', 'HummingbirdTLS': 'hummingbird', 'HummingbirdWebSocket': 'hummingbird-websocket',
    'HummingbirdWSClient': 'hummingbird-websocket', 'Metrics': 'swift-metrics', 'PostgresNIO': 'postgres-nio', 'Prometheus': 'swift-prometheus',
    # The capture library's package (CaptureLibrary/, by path).
    'MuEvalAsync': 'CaptureLibrary', 'MuEvalWire': 'CaptureLibrary', 'MuEvalCapture': 'CaptureLibrary',
    'ZeroconfBrowsing': 'CaptureLibrary', 'CAvahi': 'CaptureLibrary',
}
# The toolchain's own modules need no declaration.
SYSTEM = {'Foundation', 'FoundationNetworking', 'FoundationXML', 'Glibc', 'Musl', 'Dispatch', 'Synchronization', 'XCTest', 'Testing', 'Darwin'}
# Executables the integration tests start: declared so that `swift test` builds them.
STARTED = {'IntegrationTests': ['muevald', 'muevalctl', 'muevalsim', 'plainnote']}
IMPORT = re.compile(r'^(?:@testable )?(?:(?:public|internal|package|private|fileprivate) )?import (\w+)\s*$', re.M)
# `#if canImport(X)` then `import X`: a module built on Linux only (the capture library's Avahi browser).
CONDITIONAL = re.compile(r'^#if canImport\((\w+)\)\s*\n(?:(?:public|internal|package) )?import \1\s*$', re.M)
# Python and shell scripts embedded in Swift strings (tests) are not Swift imports.
EMBEDDED = re.compile(r'"""(.*?)"""', re.S)


def imports(target_dir):
    """The modules a target imports, and those of them it imports only where they can be."""
    found, conditional = set(), set()
    for path in glob.glob(os.path.join(target_dir, '**', '*.swift'), recursive=True):
        text = EMBEDDED.sub('', open(path).read())
        found.update(IMPORT.findall(text))
        conditional.update(CONDITIONAL.findall(text))
    return found - SYSTEM, conditional - SYSTEM


def declared_block(text, name):
    """The span of `dependencies: [...]` of target `name`, or None."""
    m = re.search(r'\.(?:target|executableTarget|testTarget)\(name: "%s"' % name, text)
    if not m:
        return None
    start = text.find('dependencies: [', m.end())
    # Not this target's when another target's declaration comes first.
    if start < 0 or re.search(r'\.(?:target|executableTarget|testTarget|systemLibrary)\(', text[m.end():start]):
        return None
    depth, i = 0, start + len('dependencies: ')
    while True:
        depth += {'[': 1, ']': -1}.get(text[i], 0)
        if depth == 0:
            return start, i + 1
        i += 1


def render(target, found, products_by_module):
    modules, conditional = found
    linux = ', condition: .when(platforms: [.linux])'
    local = sorted({m for m in modules if m not in products_by_module and m not in conditional} | set(STARTED.get(target, [])))
    products = sorted((m for m in modules if m in products_by_module), key=lambda m: (products_by_module[m], m))
    lines = []
    if local:
        lines.append('            ' + ', '.join('"%s"' % m for m in local) + ',')
    lines += ['            .target(name: "%s"%s),' % (m, linux) for m in sorted(conditional) if m not in products_by_module]
    lines += ['            .product(name: "%s", package: "%s"%s),' % (p, products_by_module[p], linux if p in conditional else '')
              for p in products]
    return 'dependencies: [\n' + '\n'.join(lines) + '\n        ]' if lines else 'dependencies: []'


def check(root, write):
    """The problems of the package at `root` (rewritten when `write`: True for all targets, or a set of names)."""
    path = os.path.join(root, 'Package.swift')
    text = open(path).read()
    targets = {os.path.basename(d.rstrip('/')): d for kind in ('Sources', 'Tests', 'Examples') for d in glob.glob(os.path.join(root, kind, '*/'))}
    products_by_module = {m: p for m, p in PRODUCTS.items() if m not in targets}
    problems = []
    for name, directory in sorted(targets.items()):
        if not glob.glob(os.path.join(directory, '**', '*.swift'), recursive=True):
            continue  # system-library targets
        span = declared_block(text, name)
        wanted = render(name, imports(directory), products_by_module)
        if span is None:
            if wanted != 'dependencies: []':
                problems.append((name, None, wanted))
            continue
        current = text[span[0]:span[1]]
        if re.sub(r'\s+', '', current) != re.sub(r'\s+', '', wanted):
            problems.append((name, span, wanted))
    if write:
        for name, span, wanted in sorted(problems, key=lambda p: -(p[1] or (0,))[0]):
            if span and (write is True or name in write):
                text = text[:span[0]] + wanted + text[span[1]:]
        open(path, 'w').write(text)
        return []
    return [(os.path.relpath(path, ROOT), name, wanted) for name, _, wanted in problems]


def main():
    write = '--write' in sys.argv and (set(sys.argv[sys.argv.index('--write') + 1:]) or True)
    problems = check(ROOT, write) + check(os.path.join(ROOT, 'CaptureLibrary'), write)
    for path, name, wanted in problems:
        print('%s: target %s should declare %s' % (path, name, re.sub(r'\s+', ' ', wanted)))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
