#!/usr/bin/env bash
# The micro benchmarks (Benchmarks/Benchmarks/: Ingest, Capture) run by ordo-one/benchmark's BenchmarkTool without its
# command plugin, which SwiftPM 6.3 breaks (the plugin looks for a built `BenchmarkTool` where SwiftPM names it
# `BenchmarkTool-tool`: ordo-one/benchmark issue #332). Prints the Markdown tables for docs/BENCHMARKS.md.
#
#   Benchmarks/micro.sh SCRATCH     (make bench passes .build-release/benchmarks)
#
# What the plugin does, done here: build the tool and the benchmark executables in release mode, then run the tool
# with the malloc interposer preloaded (the allocation counts come from it on Linux).
set -euo pipefail
[ $# -eq 1 ] || { sed -n 5p "$0" >&2; exit 2; }
mkdir -p "$1"
scratch=$(cd "$1" && pwd)
cd "$(dirname "$0")"
SWIFT=${SWIFT:-swift}
for product in BenchmarkTool Ingest Capture; do
    "$SWIFT" build -c release --scratch-path "$scratch" --product "$product" >&2
done
bin=$("$SWIFT" build -c release --scratch-path "$scratch" --show-bin-path)
tool=$bin/BenchmarkTool
[ -x "$tool" ] || tool=$bin/BenchmarkTool-tool
preload=$bin/libMallocInterposerSwift.so
[ -e "$preload" ] || { echo "micro.sh: $preload was not built: allocation counts need it" >&2; exit 1; }
LD_PRELOAD=$preload "$tool" --command run --baseline-storage-path "$PWD" --format markdown --grouping benchmark \
    --benchmark-package-identifier benchmark --no-progress \
    --targets Ingest --benchmark-executable-paths "$bin/Ingest" \
    --targets Capture --benchmark-executable-paths "$bin/Capture" \
    | sed -n '/^### /,$p'
