#!/usr/bin/env bash
# Builds the fuzzer and runs each target in FUZZ_TARGETS (default: all) for FUZZ_SECONDS seconds (default 20);
# exits non-zero when any target found a crash, a broken invariant, a leak, an input slower than
# FUZZ_INPUT_TIMEOUT seconds (a hang) or one that ran out of memory. Every target runs even after one failed.
# The failing input is written to .build-fuzz/artifacts/TARGET-crash-… (or -timeout-, -oom-, -leak-); replay it
# with
#   MUEVAL_FUZZ_TARGET=TARGET .build-fuzz/mueval-fuzzer FILE
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-20}
targets=${FUZZ_TARGETS:-wire session study replay media import console visitor control page}
scratch=${FUZZ_SCRATCH:-.build-fuzz}
fuzzer=$(FUZZ_SCRATCH="$scratch" scripts/timed "make fuzz: build" Fuzz/build.sh)
mkdir -p "$scratch/artifacts"
# The import formats are JSON and XML: both dictionaries.
cat Fuzz/xml.dict Fuzz/json.dict > "$scratch/import.dict"

# Symbolising a report once took minutes; the build has -g, so replaying an artifact shows the symbols.
export ASAN_OPTIONS=${ASAN_OPTIONS:-symbolize=0}
# libFuzzer reports a crash itself: Swift's backtracer would only keep the dead process waiting (for minutes).
export SWIFT_BACKTRACE=enable=no
# Leaks outside muEval's code (Foundation's) that the fuzzer would otherwise stop on.
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/Fuzz/lsan.supp}
# Session files and reports are written for every input: in memory when there is a tmpfs.
[ -d /dev/shm ] && export TMPDIR=/dev/shm

failed=()
for target in $targets; do
    # Seeds: the target's own, and for the targets that read a session file, sessions the simulator recorded.
    seeds=(Fuzz/corpus/"$target")
    options=(-max_len=4096)
    case $target in
        wire) options=(-max_len=8192 -dict=Fuzz/xml.dict) ;;
        session|replay|media) seeds+=(Fuzz/corpus/session) ;;
        study) options=(-max_len=16384) ;;
        import) options=(-max_len=16384 -dict="$scratch/import.dict") ;;
        control|visitor) options+=(-dict=Fuzz/json.dict) ;;
    esac
    # Inputs the fuzzer found interesting are kept between runs, apart from the checked-in seeds.
    mkdir -p "$scratch/corpus/$target" "${seeds[@]}"
    echo "== fuzz target $target: $seconds s" >&2
    # The outer timeout catches a fuzzer that cannot stop itself (a hang inside libFuzzer's own reporting).
    if ! MUEVAL_FUZZ_TARGET=$target timeout --kill-after=10 $((seconds + 120)) "$fuzzer" "${options[@]}" \
        -timeout="${FUZZ_INPUT_TIMEOUT:-10}" -rss_limit_mb=2048 -max_total_time="$seconds" -print_final_stats=1 \
        -artifact_prefix="$scratch/artifacts/$target-" "$scratch/corpus/$target" "${seeds[@]}"; then
        failed+=("$target")
    fi
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzzing failed: ${failed[*]} (inputs in $scratch/artifacts/)" >&2
    exit 1
fi
