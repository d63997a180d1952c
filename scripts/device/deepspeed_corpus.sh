#!/usr/bin/env bash
# DeepSpeed ZeRO-3 on one H200, 0.19.1 (PR #7489, the seed-000 bug) and
# 0.19.2 (PR #8032, the fix), each with and without DeepCompile. Needs
# .whl/ds-VERSION (a pure-Python DeepSpeed wheel built here with
# DS_BUILD_OPS=0), .whl/deps (the dependencies the device image lacks:
# pydantic, pydantic_core, annotated_types, typing_inspection and hjson, as
# of torch 2.11's image) and .carry (scripts/device/prepare_carry.sh), all
# carried. Both versions' wheels and the deps exceed the 64 MiB a call
# carries beside the tree: one version a call, VERSIONS=0.19.1 then
# VERSIONS=0.19.2, each carrying only its own wheel.
# Each version: a plain run with --truth (the ground truth: bytes each
# step's final release_param left allocated), then memlife runs; traces return
# in $OUT/deepspeed.tar.gz for `memlife analyze` here.
source "$(dirname "$0")/common.sh"
export PYTHONPATH=$ROOT/python:$ROOT/python/memlife/autoload
export STACKS=${STACKS:-python} TMO=${TMO:-240}
# The image's 9.0a is rejected by DeepSpeed's JIT op builder.
export TORCH_CUDA_ARCH_LIST=9.0
for v in ${VERSIONS:-0.19.1 0.19.2}; do
  site=/tmp/ds-$v
  install_wheels $site $(ls .whl/deps/*.whl .whl/optional/*.whl 2>/dev/null) .whl/ds-$v/*.whl || exit 1
  export TORCH_EXTENSIONS_DIR=/tmp/torch-ext-$v
  say "deepspeed $v"
  for mode in ${MODES:-compile eager}; do
    PYTHONPATH=$site:$PYTHONPATH timeout $TMO python3 scripts/device/deepspeed_zero3.py $mode --truth > $R/ds${v}_${mode}_truth.out 2>&1
    echo "truth $v $mode rc=$?"; grep -E "^STEP|^DEEPSPEED|Error|error:" $R/ds${v}_${mode}_truth.out | tail -12
    [ -n "${TRUTH_ONLY:-}" ] && continue
    PYTHONPATH=$site:$PYTHONPATH traced ds${v}_${mode} python3 scripts/device/deepspeed_zero3.py $mode
    grep -E "^STEP" $R/ds${v}_${mode}.out | tail -3
  done
  # The CPU corpus's ZeRO-3 program (zero.Init, GatheredParameters, a
  # checkpoint saved and loaded) on CUDA and NCCL, one rank.
  PYTHONPATH=$site:$PYTHONPATH MEMLIFE_CORPUS_DEVICE=cuda traced ds${v}_corpus_zero3 \
    python3 -m torch.distributed.run --standalone --nproc_per_node=1 tests/corpus/clean/deepspeed_zero3.py
done
analyze_traces 8
du -sh $R/traces/* 2>/dev/null
tar -C /tmp -czf $OUT/deepspeed.tar.gz ml-results
ls -la $OUT
