#!/usr/bin/env bash
# karpathy/nanoGPT's bench.py (carried in .whl/ext/nanoGPT), interleaved
# rounds in one device call: plainly, under memlife, and under memlife with
# the holder walks off (MEMLIFE_HOLDERS=0), so that the walks' share of the
# time under memlife is measured, not inferred. BEFORE=DIR (relative to the
# repository) runs memlife with the Python package of DIR/python instead of
# the walks-off variant (an older commit's: `git archive REV python | tar -x
# -C DIR`), so that a change to it is measured on one card.
# COMPILE=True|False (default True), ROUNDS (default 3); no round starts
# after BUDGET_S seconds (default 420). Each run's "time per iteration" goes
# to $R/rounds.txt, then medians.
source "$(dirname "$0")/common.sh"
export PYTHONPATH=$ROOT/python:$ROOT/python/memlife/autoload
export STACKS=${STACKS:-python} TMO=${TMO:-150} SUMARGS=--quiet
BENCH=(python3 bench.py --real_data=False --compile="${COMPILE:-True}")
per_iter() { grep -o "time per iteration: [0-9.]*" | awk '{print $4}'; }
# variant NAME plain|traced [VAR=VALUE...]: one run of the bench, its time per
# iteration appended to $R/rounds.txt.
variant() {
  local name=$1 run=$2; shift 2
  if [ "$run" = traced ]; then
    (cd .whl/ext/nanoGPT && traced "${name}_$round" env "$@" "${BENCH[@]}" > /dev/null)
  else
    (cd .whl/ext/nanoGPT && timeout "$TMO" env "$@" "${BENCH[@]}" > $R/${name}_$round.out 2>&1)
  fi
  echo "$name $(per_iter < $R/${name}_$round.out)" | tee -a $R/rounds.txt
}
say "nanoGPT ${BENCH[*]}, ${ROUNDS:-3} interleaved rounds"
for round in $(seq "${ROUNDS:-3}"); do
  ((SECONDS > ${BUDGET_S:-420})) && { echo "budget spent before round $round"; break; }
  variant plain plain
  variant memlife traced
  if [ -n "${BEFORE:-}" ]; then
    variant memlife_before traced PYTHONPATH="$ROOT/$BEFORE/python:$ROOT/$BEFORE/python/memlife/autoload"
  else
    variant memlife_holders_off traced MEMLIFE_HOLDERS=0
  fi
  rm -rf $R/traces/*
done
python3 - $R/rounds.txt <<'EOF'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    name, *value = line.split()
    if value:
        runs[name].append(float(value[0]))
for name, values in runs.items():
    print(f"{name}: median {statistics.median(values):.2f} ms per iteration over {len(values)} rounds {values}")
EOF
