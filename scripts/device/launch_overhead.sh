#!/usr/bin/env bash
# Overhead goal (b) of the GPU issue on the lent H200, alone and repeated:
# the launch-bound loop of gpt2_step.py, plain, under torch's own
# _record_memory_history(stacks="all"), and under memlife (stacks all,
# python, none; all without CUPTI; all with every nested op observed).
# The modes run interleaved, ROUNDS times, so drift on the machine hits them
# alike; launch_overhead.jsonl gets every process's median and minimum.
#   OUT=... ROUNDS=5 bash scripts/device/launch_overhead.sh
source "$(dirname "$0")/common.sh"

launch_rounds "${ROUNDS:-5}"
cp $R/launch_overhead.jsonl $R/launch_overhead.txt $OUT/
