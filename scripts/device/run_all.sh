#!/usr/bin/env bash
# The whole GPU run on the lent H200, in one call:
#   run from the repo root with OUT set; header-only deps travel in .carry/
#   (scripts/device/prepare_carry.sh makes it here).
# Builds the recorder, the torch plugin and the CUDA tracker against the
# device venv's torch, then records every GPU scenario and writes traces,
# summaries and timings into $OUT/results.tar.gz (+ log.txt, figures.json).
source "$(dirname "$0")/common.sh"

say leaky CUDA program vs compute-sanitizer
nvcc -O2 -cudart shared -arch=sm_90 tests/gpu/leaky_cuda.cu -o $B/leaky_cuda_shared
nvcc -O2 -arch=sm_90 tests/gpu/leaky_cuda.cu -o $B/leaky_cuda_static
traced leaky_shared $B/leaky_cuda_shared
traced leaky_static $B/leaky_cuda_static
timeout 120 compute-sanitizer --leak-check full $B/leaky_cuda_shared > $R/leaky_sanitizer.out 2>&1
echo "sanitizer rc=$?"; grep -E "Leaked|LEAK SUMMARY|ERROR SUMMARY" $R/leaky_sanitizer.out | head -12

say seed 001
for m in unwaited waited compiled; do TMO=300 traced seed001_$m python3 scripts/device/seed001_collectives.py $m; grep -i "unwaited" $R/seed001_$m.out | head -3; done

say seed 000
for m in set_data resize0; do traced seed000_$m python3 scripts/device/seed000_release.py $m; done

say GPT-2 oracle
SUMARGS="--from oracle_begin --to oracle_end --events $R/gpt2_memlife_events.json" STACKS=python GPT2_STEPS=3 \
  traced gpt2_oracle python3 scripts/device/gpt2_step.py oracle $R/gpt2_torch_events.json
python3 scripts/device/compare_oracle.py $R/gpt2_torch_events.json $R/gpt2_memlife_events.json | tee $R/oracle.json

say overhead
# (a) the GPT-2 step, repeated; (b) the launch-bound loop, interleaved rounds.
for rep in ${REPS:-1 2 3}; do
  python3 scripts/device/gpt2_step.py time | tee -a $R/overhead.jsonl
  STACKS=all traced gpt2_time_ml$rep python3 scripts/device/gpt2_step.py time-memlife
  grep ms_per_step $R/gpt2_time_ml$rep.out >> $R/overhead.jsonl
  python3 scripts/device/gpt2_step.py history | tee -a $R/overhead.jsonl
done
launch_rounds "${ROUNDS:-5}"
rm -rf $R/traces/gpt2_time_ml* $R/traces/launch_*   # large, timing only
du -sh $R/traces/*
cp $R/oracle.json $R/overhead.jsonl $R/launch_overhead.jsonl $R/launch_overhead.txt $OUT/ 2>/dev/null
tar -C /tmp -czf $OUT/results.tar.gz ml-results
ls -la $OUT
