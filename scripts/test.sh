#!/usr/bin/env bash
# Installs what is missing (scripts/setup.sh --deps-only), builds memlife and
# runs the whole test suite through ctest: first the
# default build (everything, torch and injected tests included), then the
# ASan+UBSan build for every test that does not inject the recorder.
#
#   scripts/test.sh
#
# Environment: MEMLIFE_JOBS (build and test parallelism, default: all
# cores); MEMLIFE_ASAN=auto|always|never (default auto: the sanitizer pass
# runs when the first pass finished within MEMLIFE_ASAN_BUDGET_S seconds,
# default 2700: the first pass, dependencies and build included, takes 31
# to 39 minutes on CI's 2 cores (38m36s on 2026-12-07), the sanitizer pass
# about 5 more, well inside CI's 90; a first pass slowed past 45 minutes
# skips it rather than risk the limit).
set -euo pipefail
cd "$(dirname "$0")/.."

jobs="${MEMLIFE_JOBS:-$(nproc)}"
asan="${MEMLIFE_ASAN:-auto}"
budget="${MEMLIFE_ASAN_BUDGET_S:-2700}"

# Two tests run at once on CI's 2 cores, each a torch process with one
# OpenMP thread per core: OpenMP's spinning workers then take the cores
# from each other and from the recorder's writer thread (a torchvision
# program pair: 23.1 s spinning, 7.6 s passive, 13.7 s without memlife).
# Passive waiting keeps the programs' intra-op threads as they are.
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-PASSIVE}"

stage() { echo "=== test.sh: $* ($((SECONDS / 60))m$((SECONDS % 60))s elapsed)" >&2; }

stage "dependencies"
scripts/setup.sh --deps-only
stage "default build"
cmake --preset default
cmake --build --preset default -j "$jobs"
stage "default tests"
ctest --test-dir build --output-on-failure -j "$jobs"

case "$asan" in
  never) stage "asan pass skipped (MEMLIFE_ASAN=never)"; exit 0 ;;
  auto)
    if ((SECONDS > budget)); then
      stage "asan pass skipped: first pass took longer than ${budget}s"
      exit 0
    fi ;;
  always) ;;
  *) echo "test.sh: MEMLIFE_ASAN must be auto, always or never" >&2; exit 2 ;;
esac
stage "asan build"
cmake --preset asan
cmake --build --preset asan -j "$jobs"
stage "asan tests (label 'injected' excluded)"
ctest --preset asan -j "$jobs"
stage "done"
