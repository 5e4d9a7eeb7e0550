#!/usr/bin/env bash
# Builds the libFuzzer binary of every fuzz target (docs/FUZZING.md) and prints its path.
#
# SwiftPM cannot link a libFuzzer executable (it renames the target's main), so:
#   1. SwiftPM builds the packages our modules depend on (swift-crypto, swift-collections, NIO's lock) without
#      instrumentation, in FUZZ_DEPS_SCRATCH with FUZZ_DEPS_BUILD's flags: `make fuzz` names make test's debug
#      build, where these targets are already compiled, so that CI compiles them once (docs/DEVELOPMENT.md);
#      alone, its own scratch directory in release mode. (Not the shipped release build: its objects ask for the
#      static Foundation's parts, and LeakSanitizer's suppressions name Foundation's shared libraries.);
#   2. swiftc compiles each of our modules under test into a module and an object file with -sanitize=fuzzer,address,
#      and clang the C modules among them (the face scan's video decoder), instrumented too: the modules that
#      Fuzz/*.swift and the console's pure files import and what those depend on, as Package.swift declares it
#      (scripts/package-imports.py --build-order), two at a time, each once its dependencies are made, skipping a
#      module whose sources, and whose dependencies, have not changed since its object was made;
#   3. swiftc compiles Fuzz/*.swift, with the console's pure files (its module needs Hummingbird, which is not
#      built here), and links everything into one binary.
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

# The console's files that build without Hummingbird (docs/FUZZING.md).
console=()
for name in ByteRangeRequest ConsoleInput ConsoleAccess ConsoleHosts ConsoleProxies ConsoleSettings ConsoleVisitors \
            ConsoleVisitorForms; do
    console+=("Sources/ConsoleServer/$name.swift")
done

# Our modules those files and Fuzz/*.swift import, and what they depend on, as Package.swift declares them: one line
# each, `MODULE KIND DIRECTORY DEPENDENCY…`, KIND swift, c or system (a system library's module map).
plan=$(python3 scripts/package-imports.py --build-order Fuzz/*.swift "${console[@]}")
declare -A kind directory dependencies
order=() includes=()
while read -r name module_kind module_directory module_dependencies; do
    order+=("$name") kind[$name]=$module_kind directory[$name]=$module_directory dependencies[$name]=$module_dependencies
    case $module_kind in
        system) includes+=(-I "$module_directory") ;;
        c) includes+=(-I "$module_directory/include") ;;
    esac
done <<< "$plan"

flags=(-sanitize=fuzzer,address -parse-as-library -O -g -swift-version 6 -package-name mueval
       -I "$out/Modules" -I "$deps/Modules" "${includes[@]}"
       -Xcc -fmodule-map-file="$deps/CNIOAtomics.build/module.modulemap")

# What MODULE's dependents are compiled against: its module file, a C module's object, a system library's module map.
made() {
    case ${kind[$1]} in
        swift) echo "$out/Modules/$1.swiftmodule" ;;
        c) echo "$out/objects/$1.c.o" ;;
        system) echo "${directory[$1]}" ;;
    esac
}

# What the fuzzer links of MODULE, if anything.
object_of() {
    case ${kind[$1]} in
        swift) echo "$out/objects/$1.o" ;;
        c) echo "$out/objects/$1.c.o" ;;
    esac
}

# compile MODULE: a Swift module into $out/Modules/MODULE.swiftmodule and $out/objects/MODULE.o, a C module with
# clang into $out/objects/MODULE.c.o; unless neither its sources nor what its dependencies made changed since.
compile() {
    local module=$1 object inputs=("${directory[$1]}") dependency
    object=$(object_of "$module")
    [ -n "$object" ] || return 0
    for dependency in ${dependencies[$module]}; do inputs+=("$(made "$dependency")"); done
    if [ -e "$object" ] && [ -z "$(find "${inputs[@]}" -newer "$object" -print -quit)" ]; then return 0; fi
    echo "fuzz build: $module" >&2
    if [ "${kind[$module]}" = c ]; then
        clang -c -O1 -g -fsanitize=fuzzer-no-link,address "${includes[@]}" "${directory[$module]}"/*.c -o "$object" >&2
        return
    fi
    local sources=()
    while IFS= read -r -d '' source; do sources+=("$source"); done < <(find "${directory[$module]}" -name '*.swift' -print0)
    "$SWIFTC" "${flags[@]}" -wmo -module-name "$module" -emit-module -emit-module-path "$out/Modules/$module.swiftmodule" \
        -c "${sources[@]}" -o "$object" >&2
    # swiftc leaves an object that came out the same untouched: its time must say that it is up to date.
    touch "$object"
}

# Two at a time (the machine has two cores), each module as soon as what it depends on is made.
declare -A running=() finished=()
left=("${order[@]}")
while ((${#left[@]} + ${#running[@]})); do
    waiting=()
    for module in "${left[@]}"; do
        ready=$((${#running[@]} < 2))
        for dependency in ${dependencies[$module]}; do [ -n "${finished[$dependency]:-}" ] || ready=0; done
        if ((ready)); then
            compile "$module" & running[$!]=$module
        else
            waiting+=("$module")
        fi
    done
    left=("${waiting[@]}")
    if ! wait -n -p pid; then
        echo "fuzz build: ${running[$pid]} failed" >&2
        kill "${!running[@]}" 2>/dev/null || true
        exit 1
    fi
    finished[${running[$pid]}]=1
    unset "running[$pid]"
done

# The object files of every module the fuzzer links, C (BoringSSL, NIO's atomics) included.
objects=()
for module in "${order[@]}"; do
    object=$(object_of "$module")
    [ -z "$object" ] || objects+=("$object")
done
for module in Crypto CryptoBoringWrapper CCryptoBoringSSL CCryptoBoringSSLShims OrderedCollections \
              InternalCollectionsUtilities NIOConcurrencyHelpers CNIOAtomics HTTPTypes; do
    while IFS= read -r -d '' object; do objects+=("$object"); done < <(find "$deps/$module.build" -name '*.o' -print0)
done

echo "fuzz build: the fuzzer" >&2
"$SWIFTC" "${flags[@]}" -module-name MuEvalFuzz -use-ld=lld -lsqlite3 -lavformat -lavcodec -lavutil \
    Fuzz/*.swift "${console[@]}" "${objects[@]}" -o "$OUT" >&2
echo "$OUT"
