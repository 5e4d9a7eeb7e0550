#!/usr/bin/env python3
"""Package.swift declares exactly what each target imports, and the imports keep to Layers.ini.

    scripts/package-imports.py          check: lists every target whose dependencies differ, every import
                                        against the layers and every place the maps below disagree (one
                                        line each), exit 1
    scripts/package-imports.py --write [TARGET…]  rewrites the targets' `dependencies:` lists from the
                                                  imports (all, or the targets named)
    scripts/package-imports.py --build-order SWIFT_FILE…  the modules of ours those files need, each after
                                        its dependencies (Fuzz/build.sh compiles them in this order)

It checks the main package and the capture library's own (CaptureLibrary/), which the main one uses
by path: there, its modules are targets; here, products of that package. The layers are the main
package's (Layers.ini, beside Package.swift; docs/DEVELOPMENT.md, "Layers").

The maps stay true with them: every folder of Sources/ that holds files, and of Tests/ and Examples/
that holds Swift, is a target of Package.swift, and README.md's `Sources/` map names every target that
is not a test, under the heading of its layer, and nothing else.

`make test` runs the check, so that a module cannot use another one that Package.swift does not
name (SwiftPM builds it anyway when something else pulls it in), nor name one it never imports,
nor import one of a higher layer or a peer.
"""
import configparser, glob, os, re, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Products of other packages, by the module a file imports.
PRODUCTS = {
    'DequeModule': 'swift-collections', 'OrderedCollections': 'swift-collections',
    'NIOConcurrencyHelpers': 'swift-nio', 'NIOCore': 'swift-nio', 'NIOPosix': 'swift-nio', 'NIOEmbedded': 'swift-nio',
    'NIOExtras': 'swift-nio-extras', 'Logging': 'swift-log',
    'ServiceLifecycle': 'swift-service-lifecycle', 'UnixSignals': 'swift-service-lifecycle',
    'ArgumentParser': 'swift-argument-parser', 'Crypto': 'swift-crypto', 'TOMLKit': 'TOMLKit',
    'NIOWebSocket': 'swift-nio', 'NIOHTTP1': 'swift-nio', 'NIOTLS': 'swift-nio', 'NIOSSL': 'swift-nio-ssl', 'HTTPTypes': 'swift-http-types',
    'Hummingbird': 'hummingbird', 'HummingbirdCore': 'hummingbird', 'HummingbirdTLS': 'hummingbird', 'HummingbirdWebSocket': 'hummingbird-websocket',
    'HummingbirdWSClient': 'hummingbird-websocket', 'Metrics': 'swift-metrics', 'PostgresNIO': 'postgres-nio', 'Prometheus': 'swift-prometheus',
    # The capture library's package (CaptureLibrary/, by path).
    'MuEvalAsync': 'CaptureLibrary', 'DescriptorIO': 'CaptureLibrary', 'MuEvalWire': 'CaptureLibrary', 'MuEvalCapture': 'CaptureLibrary',
    'ZeroconfBrowsing': 'CaptureLibrary', 'CAvahi': 'CaptureLibrary',
}
# The toolchain's own modules need no declaration.
SYSTEM = {'Foundation', 'FoundationNetworking', 'FoundationXML', 'Glibc', 'Musl', 'Dispatch', 'Synchronization', 'XCTest', 'Testing', 'Darwin'}
# Executables the integration tests start: declared so that `swift test` builds them.
STARTED = {'IntegrationTests': ['muevald', 'muevalctl', 'muevalsim', 'plainnote']}
IMPORT = re.compile(r'^(?:@testable )?(?:(?:public|internal|package|private|fileprivate) )?import (\w+)\s*$', re.M)
# A target's declaration in Package.swift: its kind and name.
DECLARATION = re.compile(r'\.(target|executableTarget|testTarget|systemLibrary)\(name: "(\w+)"')
# Within a `dependencies:` list: a target by name, `.target(name:…)`, or a product of a package.
DEPENDENCY = re.compile(r'"(\w+)"|\.target\(name: "(\w+)"|\.product\(name: "(\w+)", package: "([\w-]+)"')
# `#if canImport(X)` then `import X`: a module built on Linux only (the capture library's Avahi browser).
CONDITIONAL = re.compile(r'^#if canImport\((\w+)\)\s*\n(?:(?:public|internal|package) )?import \1\s*$', re.M)
# Python and shell scripts embedded in Swift strings (tests) are not Swift imports.
EMBEDDED = re.compile(r'"""(.*?)"""', re.S)
# In README's `Sources/` map: ` layer` headings, `  Name/  description` entries, deeper lines continue a description.
MAP_HEADING = re.compile(r'^ (\S[^(]*)')
MAP_ENTRY = re.compile(r'^  (\S.*?)(?:\s{2,}|$)')
# A name in an entry's first column: `Name/`, `Name/,` or, for a target outside Sources/, `(Name)`.
MAP_NAME = re.compile(r'^(\w+)/,?$|^\((\w+)\)$')


def swift_files(directory):
    return glob.glob(os.path.join(directory, '**', '*.swift'), recursive=True)


def imports(files):
    """The modules Swift `files` import, and those of them they import only where they can be."""
    found, conditional = set(), set()
    for path in files:
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
    targets = local_targets(root)
    products_by_module = {m: p for m, p in PRODUCTS.items() if m not in targets}
    problems = []
    for name, directory in sorted(targets.items()):
        if not swift_files(directory):
            continue  # system-library targets
        span = declared_block(text, name)
        wanted = render(name, imports(swift_files(directory)), products_by_module)
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


def read_layers(path, declared):
    """Layers.ini, bottom to top: [(layer, targets, peers, uses)], and the mistakes in the file itself."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(path)
    layers, mistakes, seen = [], [], {}
    for layer in parser.sections():
        targets = parser[layer].get('targets', '').split()
        below = [name for name, *_ in layers]
        uses = parser[layer].get('uses')
        uses = below if uses is None else uses.split()
        mistakes += ['%s: layer %s uses %s, which is not a layer below it' % (os.path.basename(path), layer, used)
                     for used in uses if used not in below]
        for target in targets:
            if target not in declared:
                mistakes.append('%s: layer %s names %s, which Package.swift does not declare' % (os.path.basename(path), layer, target))
            elif target in seen:
                mistakes.append('%s: %s is in both %s and %s' % (os.path.basename(path), target, seen[target], layer))
            seen[target] = layer
        layers.append((layer, targets, parser[layer].getboolean('peers', False), uses))
    return layers, mistakes


def layer_violations(root):
    """One line for every import of the main package that breaks its layers, and every target they leave out."""
    path = os.path.join(root, 'Layers.ini')
    declared = {name for _, name in DECLARATION.findall(open(os.path.join(root, 'Package.swift')).read())}
    layers, problems = read_layers(path, declared)
    rank = {layer: i for i, (layer, *_) in enumerate(layers)}
    layer_of = {target: layer for layer, targets, *_ in layers for target in targets}
    peers = {layer for layer, _, peer, _ in layers if peer}
    uses = {layer: used for layer, _, _, used in layers}
    problems += ['Layer violation: target %s is in no layer of %s' % (name, os.path.basename(path))
                 for name in sorted(declared - set(layer_of))]
    for name, directory in sorted(local_targets(root).items()):
        if name not in layer_of:
            continue
        a = layer_of[name]
        for imported in sorted(imports(swift_files(directory))[0] & set(layer_of) - {name}):
            b = layer_of[imported]
            if rank[b] > rank[a]:
                why = '%s is above %s' % (b, a)
            elif b == a and a in peers:
                why = '%s are peers' % a
            elif b != a and b not in uses[a]:
                why = '%s may use only %s' % (a, ', '.join(uses[a]))
            else:
                continue
            problems.append('Layer violation: %s (%s) imports %s (%s): %s' % (name, a, imported, b, why))
    return problems


def source_map(path):
    """README's `Sources/` map: {name: heading}, each heading a list of layers ("composition, server"),
    and the names it gives twice."""
    entries, twice, heading, inside = {}, [], [], False
    for line in open(path).read().splitlines():
        if not line.startswith(' '):
            inside = line == 'Sources/'
            continue
        if not inside:
            continue
        if m := MAP_HEADING.match(line):
            heading = [layer.strip() for layer in m.group(1).split(',')]
        elif m := MAP_ENTRY.match(line):
            for found in filter(None, map(MAP_NAME.match, m.group(1).split())):
                name = found.group(1) or found.group(2)
                if name in entries:
                    twice.append(name)
                entries[name] = heading
    return entries, twice


def holds_target(root, directory):
    """Whether a folder must be a target: in Sources/ when it holds any file (a C library may have no Swift); in Tests/
    and Examples/ only when it holds Swift (they also keep capture.js's tests, Python's and the web example)."""
    if os.path.relpath(directory, root).startswith('Sources' + os.sep):
        return any(files for _, _, files in os.walk(directory))
    return bool(swift_files(directory))


def map_problems(root):
    """The folders that are no target, and where README's `Sources/` map and Layers.ini disagree."""
    text = open(os.path.join(root, 'Package.swift')).read()
    declared = dict((name, kind) for kind, name in DECLARATION.findall(text))
    problems = ['%s/ is not a target of Package.swift' % os.path.relpath(directory.rstrip('/'), root)
                for name, directory in sorted(local_targets(root).items()) if name not in declared and holds_target(root, directory)]
    layers, _ = read_layers(os.path.join(root, 'Layers.ini'), set(declared))
    layer_of = {target: layer for layer, targets, *_ in layers for target in targets}
    entries, twice = source_map(os.path.join(root, 'README.md'))
    problems += ['README.md: the Sources/ map names %s twice' % name for name in sorted(set(twice))]
    for name, kind in sorted(declared.items()):
        if kind == 'testTarget':
            continue
        if name not in entries:
            problems.append('README.md: target %s (%s) is not in the Sources/ map' % (name, layer_of.get(name, 'no layer')))
        elif name in layer_of and layer_of[name] not in entries[name]:
            problems.append('README.md: target %s is under "%s" in the Sources/ map, but Layers.ini puts it in %s'
                            % (name, ', '.join(entries[name]), layer_of[name]))
    problems += ['README.md: the Sources/ map names %s, which Package.swift does not declare' % name
                 for name in sorted(set(entries) - set(declared))]
    return problems


def local_targets(root):
    """The directories of the package's targets, by name."""
    return {os.path.basename(d.rstrip('/')): d for kind in ('Sources', 'Tests', 'Examples') for d in glob.glob(os.path.join(root, kind, '*/'))}


def modules(root, library='CaptureLibrary'):
    """Our modules as Package.swift declares them, the capture library's included: name -> (kind, directory, dependencies)."""
    found = {}
    for package in (os.path.join(root, library), root):
        text = open(os.path.join(package, 'Package.swift')).read()
        directories = local_targets(package)
        for kind, name in DECLARATION.findall(text):
            directory = directories.get(name)
            kind = 'system' if kind == 'systemLibrary' else 'swift' if directory and swift_files(directory) else 'c'
            span = declared_block(text, name)
            dependencies = []
            for plain, target, product, product_package in DEPENDENCY.findall(text[span[0]:span[1]] if span else ''):
                if plain or target or product_package == library:
                    dependencies.append(plain or target or product)
            found[name] = (kind, os.path.relpath(directory, root), dependencies)
    return found


def build_order(root, files):
    """`MODULE KIND DIRECTORY DEPENDENCY…` for each module of ours that `files` import, directly or through
    another, each after its dependencies; KIND is swift, c or system (a system library's module map)."""
    known = modules(root)
    lines, done = [], set()

    def visit(name):
        if name in done:
            return
        done.add(name)
        kind, directory, dependencies = known[name]
        for dependency in dependencies:
            visit(dependency)
        lines.append(' '.join([name, kind, directory] + dependencies))

    for name in sorted(imports(files)[0] & set(known)):
        visit(name)
    return lines


def main():
    if '--build-order' in sys.argv:
        print('\n'.join(build_order(ROOT, sys.argv[sys.argv.index('--build-order') + 1:])))
        return 0
    write = '--write' in sys.argv and (set(sys.argv[sys.argv.index('--write') + 1:]) or True)
    problems = check(ROOT, write) + check(os.path.join(ROOT, 'CaptureLibrary'), write)
    for path, name, wanted in problems:
        print('%s: target %s should declare %s' % (path, name, re.sub(r'\s+', ' ', wanted)))
    violations = [] if write else layer_violations(ROOT) + map_problems(ROOT)
    print('\n'.join(violations), end='\n' if violations else '')
    return 1 if problems or violations else 0


if __name__ == '__main__':
    sys.exit(main())
