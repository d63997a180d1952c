#!/usr/bin/env bash
# huggingface/pytorch-image-models' train.py (its own timm package, carried
# in .whl/ext/timm by scripts/device/prepare_timm.sh), run unchanged on one
# GPU under memlife, in one device call, on generated images (an image
# folder of 2 classes). Traces come back in $OUT/timm.tar.gz for `memlife
# analyze` here. ONLY="name ..." records just those scenarios.
source "$(dirname "$0")/common.sh"
export PYTHONPATH=$ROOT/python:$ROOT/python/memlife/autoload:$ROOT/.whl/ext/timm
export STACKS=${STACKS:-python} TMO=${TMO:-300} SUMARGS=--quiet
TIMM=$ROOT/.whl/ext/timm
DATA=/tmp/timm-data
image_folder $DATA 112 train:256 validation:64
# timm_run NAME ARGS...: train.py on the image folder with ARGS.
timm_run() {
  local name=$1; shift
  wanted "$name" || return 0
  rm -rf /tmp/timm-out-$name
  (cd "$TIMM" && traced "$name" python3 train.py --data-dir $DATA --num-classes 2 -j 2 --pin-mem \
     --output /tmp/timm-out-$name --log-interval 4 "$@")
  grep -E "Train: [0-9]+ \[.*\]" $R/$name.out | sed -n '1p;$p' | cut -c1-160
}
say "timm train.py ($(cat $TIMM/REVISION)), one GPU"
# ResNet-18, fp16 autocast with timm's NativeScaler, channels-last, EMA of
# the weights, timm's CUDA prefetcher (side-stream copies), 3 epochs with
# checkpoints, then validation of the best.
timm_run timm_resnet18_amp --model resnet18 --img-size 96 -b 32 --epochs 3 --amp --channels-last \
  --model-ema --checkpoint-hist 2
# ViT-tiny compiled (inductor), bf16 autocast, mixup/cutmix, gradient
# accumulation, AdamW, drop-path.
timm_run timm_vit_compiled_bf16 --model vit_tiny_patch16_224 --model-kwargs img_size=96 -b 32 \
  --img-size 96 --epochs 2 --amp --amp-dtype bfloat16 --mixup 0.2 --cutmix 1.0 --grad-accum-steps 2 --opt adamw \
  --drop-path 0.1 --torchcompile inductor

say traces
(cd $R && tar czf $OUT/timm.tar.gz traces *.out)
ls -la $OUT
