#!/usr/bin/env bash
# karpathy/nanoGPT's bench.py (carried in .whl/ext/nanoGPT), interleaved
# rounds in one device call: plainly, under memlife, and under memlife with
# the holder walks off (MEMLIFE_HOLDERS=0), so that the walks' share of the
# time under memlife is measured, not inferred. COMPILE=True|False (default
# True), ROUNDS (default 3); no round starts after BUDGET_S seconds (default
# 420). Each run's "time per iteration" goes to $R/rounds.txt, then medians.
source "$(dirname "$0")/common.sh"
export PYTHONPATH=$ROOT/python:$ROOT/python/memlife/autoload
export STACKS=${STACKS:-python} TMO=${TMO:-150} SUMARGS=--quiet
compile=${COMPILE:-True}
bench() { (cd .whl/ext/nanoGPT && "$@" python3 bench.py --real_data=False --compile=$compile 2>&1); }
per_iter() { grep -o "time per iteration: [0-9.]*" | awk '{print $4}'; }
say "nanoGPT bench.py --compile=$compile, ${ROUNDS:-3} interleaved rounds"
for round in $(seq "${ROUNDS:-3}"); do
  ((SECONDS > ${BUDGET_S:-420})) && { echo "budget spent before round $round"; break; }
  echo "plain $(bench timeout $TMO env | per_iter)" | tee -a $R/rounds.txt
  (cd .whl/ext/nanoGPT && traced memlife_$round python3 bench.py --real_data=False --compile=$compile > /dev/null)
  echo "memlife $(per_iter < $R/memlife_$round.out)" | tee -a $R/rounds.txt
  (cd .whl/ext/nanoGPT && MEMLIFE_HOLDERS=0 traced noholders_$round python3 bench.py --real_data=False --compile=$compile > /dev/null)
  echo "memlife_holders_off $(per_iter < $R/noholders_$round.out)" | tee -a $R/rounds.txt
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
