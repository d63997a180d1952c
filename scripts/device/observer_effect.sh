#!/usr/bin/env bash
# Does memlife change what a program sees of itself? Runs the programs that
# use PyTorch's own observers on the GPU, plainly and under memlife's
# recorder, interleaved ROUNDS times, and prints each run's "OBSERVED" line
# (after scripts/device/prepare_carry.sh here; OUT set by the device tool):
#   bash scripts/device/observer_effect.sh
# - tests/corpus/clean/profiler_memory_schedule.py on CUDA: torch.profiler
#   with CUDA activities, so Kineto's CUPTI client runs beside memlife's
#   (which subscribes to CUPTI callbacks at CUDA's injection); the line
#   counts the profile's events and those on the GPU.
# - tests/corpus/cuda/memory_history_snapshot.py: the caching allocator's
#   memory history (memory_viz) beside memlife's allocator tracker; the line
#   counts the snapshot's actions, segments and blocks.
# Also prints memlife's own lines (a CUPTI subscription refused, say).
source "$(dirname "$0")/common.sh"
export SUMARGS=--quiet
ROUNDS=${ROUNDS:-2}
probe() {
  local name=$1; shift
  for round in $(seq "$ROUNDS"); do
    env -u PYTHONPATH MEMLIFE_CORPUS_DEVICE=cuda timeout 300 "$@" > $R/$name.plain$round.out 2>&1
    echo "$name plain   rc=$? $(grep OBSERVED $R/$name.plain$round.out)"
    PYTHONPATH=$ROOT/python:$ROOT/python/memlife/autoload MEMLIFE_CORPUS_DEVICE=cuda \
      traced $name.memlife$round "$@" > /dev/null
    echo "$name memlife $(grep -E 'OBSERVED' $R/$name.memlife$round.out)"
    grep -E '^memlife' $R/$name.memlife$round.out | grep -v 'trace in\|records,' | sort -u
  done
}
say observers beside memlife
probe profiler python3 tests/corpus/clean/profiler_memory_schedule.py
probe memory_history python3 tests/corpus/cuda/memory_history_snapshot.py
tar -C /tmp -czf $OUT/observer_effect.tar.gz ml-results
