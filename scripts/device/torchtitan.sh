#!/usr/bin/env bash
# pytorch/torchtitan v0.2.2's Llama 3 debug model, run unchanged on one GPU
# under memlife, in one device call. Here, before the call:
#   bash scripts/device/prepare_carry.sh
#   bash scripts/device/prepare_torchtitan.sh   # .whl/ext/torchtitan, .whl/tt
# then  bash scripts/device/torchtitan.sh  with carry [".carry", ".whl"].
# Each scenario is torchtitan's own trainer under torchrun (NCCL, one rank);
# the traces come back in $OUT/torchtitan.tar.gz for `memlife analyze` here.
# ONLY="name ..." records just those scenarios; PLAIN=1 first runs two
# without memlife: the eager one, and the pinned-memory checkpoints torch
# 2.11 cannot save twice.
source "$(dirname "$0")/common.sh"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/tt-site .whl/tt/*.whl || exit 1
export PYTHONPATH=$ROOT/python:$ROOT/python/memlife/autoload:/tmp/tt-site
export STACKS=${STACKS:-python} TMO=${TMO:-300} SUMARGS=--quiet
# The dataset is the JSON lines file prepare_torchtitan.sh wrote; nothing
# may be fetched.
export HF_DATASETS_CACHE=/tmp/tt-hf HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1
TT=$ROOT/.whl/ext/torchtitan
CKPT=/tmp/tt-dump

# titan NAME [plain] ARGS...: torchtitan's trainer with the debug config and
# ARGS; "plain" runs it without memlife (its own per-step lines still land
# in $R/NAME.out).
titan() {
  local name=$1; shift
  wanted "$name" || return 0
  local run=traced
  if [ "${1:-}" = plain ]; then run=untraced; shift; fi
  (cd "$TT" && $run "$name" python3 -m torch.distributed.run --standalone --nproc_per_node=1 \
     -m torchtitan.train --job.config_file torchtitan/models/llama3/train_configs/debug_model.toml \
     --job.dump_folder "$CKPT" --metrics.log_freq 5 "$@")
  grep -E "step: *[0-9]+ .*memory" $R/$name.out | sed -n '1p;$p'
}
untraced() {
  local name=$1; shift
  timeout "$TMO" "$@" > $R/$name.out 2>&1
  echo "$name rc=$?"; tail -3 $R/$name.out
}

say torchtitan v0.2.2 llama3 debugmodel, one GPU
python3 -c 'import datasets, torchdata, tyro; print("datasets", datasets.__version__, "torchdata", torchdata.__version__, "tyro", tyro.__version__)'
rm -rf $CKPT
if [ -n "${PLAIN:-}" ]; then
  titan tt_plain_eager plain --training.steps 10
  rm -rf $CKPT
  # torch 2.11's DefaultStager cannot stage a second checkpoint
  # (pytorch/pytorch#183413, pytorch/torchtitan#3476): this fails
  # without memlife too (the error surfaces at step 15, waiting for step 10's save).
  titan tt_plain_pinned_mem plain --training.steps 20 --compile.enable --activation_checkpoint.mode full \
    --checkpoint.enable --checkpoint.interval 5 --checkpoint.async_mode async_with_pinned_mem
  grep -m1 "KeyError" $R/tt_plain_pinned_mem.out
  rm -rf $CKPT
fi
# Eager, selective AC every 2nd layer (the config's own), 20 steps, a
# synchronous DCP checkpoint every 5 steps.
titan tt_eager_ckpt --training.steps 20 --checkpoint.enable --checkpoint.interval 5
# Resumed from step 20's checkpoint, to step 30.
titan tt_eager_resume --training.steps 30 --checkpoint.enable --checkpoint.interval 5
rm -rf $CKPT
# Compiled model and loss, per-op selective AC, asynchronous checkpoints.
titan tt_compiled_sac_op --training.steps 20 --compile.enable \
  --activation_checkpoint.selective_ac_option op \
  --checkpoint.enable --checkpoint.interval 5 --checkpoint.async_mode async
rm -rf $CKPT
# Full AC, compiled.
titan tt_compiled_full_ac --training.steps 20 --compile.enable --activation_checkpoint.mode full

say traces
(cd $R && tar czf $OUT/torchtitan.tar.gz traces *.out)
ls -la $OUT
