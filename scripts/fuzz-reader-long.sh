#!/bin/sh
# Fuzzes the trace reader for a long time (default 1 hour):
#   scripts/fuzz-reader-long.sh [SECONDS] [JOBS]
# Builds reader_fuzz with clang into build-fuzz/, keeps what it learns in
# build-fuzz/fuzz-long/corpus (the committed tests/fuzz/corpus is only read)
# and writes crashing inputs to build-fuzz/fuzz-long/artifacts/.
# Reproduce a crash with: build-fuzz/bin/reader_fuzz ARTIFACT
set -eu
seconds=${1:-3600}
jobs=${2:-1}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MEMLIFE_FUZZ_BUILD_DIR:-$root/build-fuzz}

CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DMEMLIFE_WITH_TORCH=OFF \
  -DMEMLIFE_BUILD_FUZZ=ON -DMEMLIFE_BUILD_BENCH=OFF >/dev/null
ninja -C "$build" reader_fuzz

work=$build/fuzz-long
mkdir -p "$work/corpus" "$work/artifacts"
exec "$build/bin/reader_fuzz" -max_total_time="$seconds" -jobs="$jobs" -workers="$jobs" \
  -max_len=65536 -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
  "$work/corpus" "$root/tests/fuzz/corpus"
