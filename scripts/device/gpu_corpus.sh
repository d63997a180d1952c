#!/usr/bin/env bash
# The GPU half of the program corpus, in one device call (after
# scripts/device/prepare_carry.sh here):
#   bash scripts/device/gpu_corpus.sh     # OUT set by the device tool
# Builds against the device's torch (common.sh), records clean GPU programs
# (a GPT-2 training loop, HF Trainer on CUDA, seed 001 waited and compiled)
# and their leaky counterparts (the loop keeping its losses, seed 001 never
# waited, seed 000's set_data release, a raw-CUDA leak), with memlife's
# Python hooks on (PYTHONPATH as `memlife run` sets it), and returns the
# traces in $OUT/gpu_corpus.tar.gz for `memlife analyze` here.
# ONLY="name ..." records just those scenarios.
source "$(dirname "$0")/common.sh"
export PYTHONPATH=$ROOT/python:$ROOT/python/memlife/autoload
export STACKS=${STACKS:-python} TMO=${TMO:-300}
scenario() {
  if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $1 "* ]]; then return; fi
  traced "$@"
}

say clean GPU programs
scenario gpu_train_clean python3 scripts/device/gpu_train_loop.py clean
MEMLIFE_CORPUS_DEVICE=cuda scenario hf_trainer_cuda python3 tests/corpus/clean/hf_gpt2_trainer.py
scenario seed001_waited python3 scripts/device/seed001_collectives.py waited
scenario seed001_compiled python3 scripts/device/seed001_collectives.py compiled
scenario seed000_resize0 python3 scripts/device/seed000_release.py resize0

say leaky GPU programs
scenario gpu_train_leak python3 scripts/device/gpu_train_loop.py leak
scenario seed001_unwaited python3 scripts/device/seed001_collectives.py unwaited
scenario seed000_set_data python3 scripts/device/seed000_release.py set_data
nvcc -O2 -cudart shared -arch=sm_90 tests/gpu/leaky_cuda.cu -o $B/leaky_cuda_shared
scenario leaky_cuda $B/leaky_cuda_shared

if [ -x $B/bin/memlife ]; then
  say analyze on the device
  for d in $R/traces/*/; do
    n=$(basename $d); $B/bin/memlife analyze $d -o $R/$n.report.json > $R/$n.analyze.txt 2>&1
    echo "--- $n"; head -12 $R/$n.analyze.txt
  done
fi
du -sh $R/traces/*
tar -C /tmp -czf $OUT/gpu_corpus.tar.gz ml-results
ls -la $OUT
