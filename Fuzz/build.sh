#!/usr/bin/env bash
# Builds the libFuzzer binary of every fuzz target (docs/FUZZING.md) and prints its path.
#
# SwiftPM cannot link a libFuzzer executable (it renames the target's main), so:
#   1. SwiftPM builds the packages our modules depend on (swift-crypto, swift-collections, NIO's lock) without
#      instrumentation, in FUZZ_DEPS_SCRATCH with FUZZ_DEPS_BUILD's flags: `make fuzz` names make test's debug
#      build, where these targets are already compiled, so that CI compiles them once (docs/DEVELOPMENT.md);
#      alone, its own scratch directory in release mode. (Not the shipped release build: its objects ask for the
#      static Foundation's parts, and LeakSanitizer's suppressions name Foundation's shared libraries.);
#   2. swiftc compiles each of our modules under test (Sources/<Module>) into a module and an object file with
#      -sanitize=fuzzer,address, two at a time in dependency order, skipping a module whose sources, and whose
#      dependencies, have not changed since its object was made;
#   3. swiftc compiles Fuzz/*.swift, with the console's pure files (its module needs Hummingbird, which is not
#      built here), and links everything into one binary; clang compiles the C module the face scan decodes
#      video with (CVideoDecode, and CMediaInput, which it shares with the audio decoder), instrumented too.
# Only our modules are instrumented: coverage guides the fuzzer through the code under test.
set -euo pipefail
cd "$(dirname "$0")/.."

SWIFT=${SWIFT:-swift}
SWIFTC=${SWIFTC:-swiftc}
SCRATCH=${FUZZ_SCRATCH:-.build-fuzz}
DEPS_SCRATCH=${FUZZ_DEPS_SCRATCH:-$SCRATCH}
read -r -a deps_build <<< "${FUZZ_DEPS_BUILD:--c release}"
deps=$("$SWIFT" build "${deps_build[@]}" --scratch-path "$DEPS_SCRATCH" --show-bin-path)
out="$SCRATCH/fuzz"
OUT="$SCRATCH/mueval-fuzzer"
mkdir -p "$out/Modules" "$out/objects"

for target in Crypto OrderedCollections NIOConcurrencyHelpers HTTPTypes; do
    "$SWIFT" build "${deps_build[@]}" --scratch-path "$DEPS_SCRATCH" --target "$target" >&2
done

flags=(-sanitize=fuzzer,address -parse-as-library -O -g -swift-version 6 -package-name mueval
       -I "$out/Modules" -I "$deps/Modules" -I Sources/CSQLite -I Sources/CVideoDecode/include
       -Xcc -fmodule-map-file="$deps/CNIOAtomics.build/module.modulemap")

# compile MODULE DEPENDENCY...: Sources/MODULE (or the capture library's, CaptureLibrary/Sources/MODULE) into
# $out/Modules/MODULE.swiftmodule and $out/objects/MODULE.o.
compile() {
    local module=$1 object="$out/objects/$1.o" directory="Sources/$1"
    [ -d "$directory" ] || directory="CaptureLibrary/Sources/$1"
    shift
    local sources=()
    while IFS= read -r -d '' source; do sources+=("$source"); done < <(find "$directory" -name '*.swift' -print0)
    if [ -e "$object" ] && [ -z "$(find "$directory" "$@" -newer "$object" -print -quit)" ]; then return 0; fi
    echo "fuzz build: $module" >&2
    "$SWIFTC" "${flags[@]}" -wmo -module-name "$module" -emit-module -emit-module-path "$out/Modules/$module.swiftmodule" \
        -c "${sources[@]}" -o "$object" >&2
}
module() { echo "$out/Modules/$1.swiftmodule"; }

# Two at a time (the machine has two cores), each wave after the modules it imports.
compile MuEvalWire & first=$!
compile StudyMetrics; wait $first
compile SessionModel "$(module MuEvalWire)" & first=$!
compile WireProtocol "$(module MuEvalWire)"; wait $first
compile JournalStorage "$(module WireProtocol)" "$(module SessionModel)" & first=$!
compile ControlProtocol "$(module WireProtocol)" "$(module SessionModel)"; wait $first
compile SessionAnalysis "$(module JournalStorage)" & first=$!
compile SessionImport "$(module JournalStorage)"; wait $first
compile StudyAnalysis "$(module SessionAnalysis)" "$(module StudyMetrics)" & first=$!
compile TesterPool "$(module JournalStorage)"; wait $first
compile ReportCritique "$(module StudyAnalysis)" Sources/CVideoDecode Sources/CMediaInput
for module in CVideoDecode CMediaInput; do
    object="$out/objects/$module.c.o"
    if [ ! -e "$object" ] || [ -n "$(find Sources/$module Sources/CMediaInput -newer "$object" -print -quit)" ]; then
        echo "fuzz build: $module" >&2
        clang -c -O1 -g -fsanitize=fuzzer-no-link,address -I Sources/CVideoDecode/include -I Sources/CMediaInput/include \
            Sources/$module/*.c -o "$object" >&2
    fi
done

# The object files of every module the fuzzer links, C (BoringSSL, NIO's atomics) included.
objects=("$out"/objects/*.o)
for module in Crypto CryptoBoringWrapper CCryptoBoringSSL CCryptoBoringSSLShims OrderedCollections \
              InternalCollectionsUtilities NIOConcurrencyHelpers CNIOAtomics HTTPTypes; do
    while IFS= read -r -d '' object; do objects+=("$object"); done < <(find "$deps/$module.build" -name '*.o' -print0)
done

echo "fuzz build: the fuzzer" >&2
console=()
for name in ReplayIndex ByteRangeRequest ConsoleInput ConsoleAccess ConsoleHosts ConsoleProxies ConsoleSettings ConsoleVisitors \
            ConsoleVisitorForms; do
    console+=("Sources/ConsoleServer/$name.swift")
done
"$SWIFTC" "${flags[@]}" -module-name MuEvalFuzz -use-ld=lld -lsqlite3 -lavformat -lavcodec -lavutil \
    Fuzz/*.swift "${console[@]}" "${objects[@]}" -o "$OUT" >&2
echo "$OUT"
