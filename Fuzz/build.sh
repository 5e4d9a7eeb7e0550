#!/usr/bin/env bash
# Builds the libFuzzer binary for the wire decoder (docs/FUZZING.md) and prints its path.
#
# SwiftPM cannot link a libFuzzer executable (it renames the target's main), so:
#   1. SwiftPM builds WireProtocol's dependencies (swift-crypto, swift-collections) in release mode, without
#      instrumentation, in its own scratch directory (so a half-finished edit elsewhere cannot break it);
#   2. swiftc compiles Sources/WireProtocol and the fuzz entry into one module with -sanitize=fuzzer,address,
#      importing the dependencies' modules and linking their object files.
# Only the decoder is instrumented: coverage guides the fuzzer through the code under test.
set -euo pipefail
cd "$(dirname "$0")/.."

SWIFT=${SWIFT:-swift}
SWIFTC=${SWIFTC:-swiftc}
SCRATCH=${FUZZ_SCRATCH:-.build-fuzz}
OUT="$SCRATCH/wire-decoder-fuzzer"

"$SWIFT" build -c release --scratch-path "$SCRATCH" --target WireProtocol >&2
deps="$SCRATCH/release"
# The object files of every module WireProtocol links against, C (BoringSSL) included.
objects=()
for module in Crypto CryptoBoringWrapper CCryptoBoringSSL CCryptoBoringSSLShims OrderedCollections InternalCollectionsUtilities; do
    while IFS= read -r -d '' object; do objects+=("$object"); done < <(find "$deps/$module.build" -name '*.o' -print0)
done

"$SWIFTC" -sanitize=fuzzer,address -parse-as-library -O -g -module-name WireDecoderFuzzer \
    -I "$deps/Modules" -use-ld=lld \
    Sources/WireProtocol/*.swift Fuzz/WireDecoderFuzzer.swift "${objects[@]}" \
    -o "$OUT" >&2
echo "$OUT"
