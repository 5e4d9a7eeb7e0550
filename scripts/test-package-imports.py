#!/usr/bin/env python3
"""package-imports.py fails, with one line naming the edge, on each kind of layer violation (Layers.ini), and on
each way README's source map or the folders of Sources/ stop matching Package.swift.

Each test copies the package's manifests, Layers.ini, README.md, the script and every Swift file to a temporary
directory, breaks one rule there, and compares the check's output with that of the untouched copy, so
that it holds whatever else the tree being worked on reports. `make test` runs it beside the check.
"""
import os, shutil, subprocess, sys, tempfile, unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def copy_package(destination):
    """What the check reads: Package.swift (both packages), Layers.ini, README.md, the script and the Swift sources."""
    keep = lambda directory, names: [n for n in names if not n.endswith('.swift') and not os.path.isdir(os.path.join(directory, n))]
    for tree in ('Sources', 'Tests', 'Examples', 'CaptureLibrary/Sources'):
        shutil.copytree(os.path.join(ROOT, tree), os.path.join(destination, tree), ignore=keep)
    for name in ('Package.swift', 'Layers.ini', 'README.md', 'CaptureLibrary/Package.swift', 'scripts/package-imports.py'):
        os.makedirs(os.path.dirname(os.path.join(destination, name)), exist_ok=True)
        shutil.copy(os.path.join(ROOT, name), os.path.join(destination, name))


def run_check(root):
    result = subprocess.run([sys.executable, os.path.join(root, 'scripts', 'package-imports.py')],
                            capture_output=True, text=True, cwd=root)
    return result.returncode, set(result.stdout.splitlines())


class CheckedCopy(unittest.TestCase):
    """A copy of the package, and what the check said of it untouched."""
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix='package-imports-test-')
        self.addCleanup(shutil.rmtree, self.root)
        copy_package(self.root)
        _, self.before = run_check(self.root)

    def assertReports(self, line):
        status, after = run_check(self.root)
        self.assertEqual(status, 1)
        self.assertNotIn(line, self.before)
        self.assertIn(line, after)


class LayerViolationTests(CheckedCopy):
    def add_import(self, target, module):
        with open(os.path.join(self.root, 'Sources', target, 'LayerViolation.swift'), 'w') as f:
            f.write('internal import %s\n' % module)

    def test_an_upward_import_fails(self):
        self.add_import('SessionModel', 'SessionCore')
        self.assertReports('Layer violation: SessionModel (foundation) imports SessionCore (core): core is above foundation')

    def test_an_adapter_importing_another_fails(self):
        self.add_import('CaptureServer', 'Zeroconf')
        self.assertReports('Layer violation: CaptureServer (adapters) imports Zeroconf (adapters): adapters are peers')

    def test_a_layer_below_that_is_not_used_fails(self):
        self.add_import('muevalctl', 'Zeroconf')
        self.assertReports('Layer violation: muevalctl (client) imports Zeroconf (adapters): '
                           'client may use only foundation, wire, storage, analysis, control-protocol')
        self.add_import('ConsoleServer', 'ControlProtocol')
        self.assertReports('Layer violation: ConsoleServer (adapters) imports ControlProtocol (control-protocol): '
                           'adapters may use only foundation, wire, storage, pool, analysis, core')
        self.add_import('TesterPool', 'WireProtocol')
        self.assertReports('Layer violation: TesterPool (pool) imports WireProtocol (wire): pool may use only foundation, storage')

    def test_a_target_in_no_layer_fails(self):
        path = os.path.join(self.root, 'Package.swift')
        with open(path) as f:
            text = f.read()
        with open(path, 'w') as f:
            f.write(text.replace('    targets: [\n', '    targets: [\n        .target(name: "Stray"),\n', 1))
        self.assertReports('Layer violation: target Stray is in no layer of Layers.ini')


class SourceMapTests(CheckedCopy):
    def edit_readme(self, old, new):
        path = os.path.join(self.root, 'README.md')
        with open(path) as f:
            text = f.read()
        self.assertIn(old, text)
        with open(path, 'w') as f:
            f.write(text.replace(old, new, 1))

    def entry(self, name):
        """README's map line of target `name`."""
        with open(os.path.join(self.root, 'README.md')) as f:
            return next(line + '\n' for line in f.read().splitlines() if line.startswith('  %s/ ' % name))

    def test_a_target_missing_from_the_map_fails(self):
        self.edit_readme(self.entry('StudyMetrics'), '')
        self.assertReports('README.md: target StudyMetrics (foundation) is not in the Sources/ map')

    def test_a_target_under_another_layer_fails(self):
        line = self.entry('StudyMetrics')
        self.edit_readme(line, '')
        self.edit_readme(' wire\n', ' wire\n' + line)
        self.assertReports('README.md: target StudyMetrics is under "wire" in the Sources/ map, but Layers.ini puts it in foundation')

    def test_a_target_named_twice_fails(self):
        self.edit_readme(' wire\n', ' wire\n' + self.entry('StudyMetrics'))
        self.assertReports('README.md: the Sources/ map names StudyMetrics twice')

    def test_a_map_entry_without_a_target_fails(self):
        self.edit_readme(' wire\n', ' wire\n  Gone/               moved away\n')
        self.assertReports('README.md: the Sources/ map names Gone, which Package.swift does not declare')

    def test_a_folder_that_is_no_target_fails(self):
        os.makedirs(os.path.join(self.root, 'Sources', 'Stray'))
        with open(os.path.join(self.root, 'Sources', 'Stray', 'Left.swift'), 'w') as f:
            f.write('let left = 1\n')
        self.assertReports('Sources/Stray/ is not a target of Package.swift')


if __name__ == '__main__':
    unittest.main()
