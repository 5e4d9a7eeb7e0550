#!/usr/bin/env bash
# Builds the wire decoder's fuzzer and runs it for FUZZ_SECONDS (default 60); exits non-zero on a crash, a
# broken invariant, a leak, an input slower than FUZZ_INPUT_TIMEOUT seconds (a hang) or running out of memory.
# The failing input is written to .build-fuzz/artifacts/ (crash-*, timeout-*, oom-*, leak-*); replay it with
#   .build-fuzz/wire-decoder-fuzzer FILE
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-60}
scratch=${FUZZ_SCRATCH:-.build-fuzz}
fuzzer=$(FUZZ_SCRATCH="$scratch" Fuzz/build.sh)
# Inputs the fuzzer found interesting are kept between runs, apart from the checked-in seeds.
mkdir -p "$scratch/corpus" "$scratch/artifacts"

# Symbolising a report once took minutes; the build has -g, so replaying an artifact shows the symbols.
export ASAN_OPTIONS=${ASAN_OPTIONS:-symbolize=0}
# The outer timeout catches a fuzzer that cannot stop itself (a hang inside libFuzzer's own reporting).
timeout --kill-after=10 $((seconds + 120)) "$fuzzer" \
    -dict=Fuzz/xml.dict -max_len=8192 -timeout="${FUZZ_INPUT_TIMEOUT:-10}" -rss_limit_mb=2048 \
    -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$scratch/artifacts/" \
    "$scratch/corpus" Fuzz/corpus
