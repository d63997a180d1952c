#!/usr/bin/env bash
# torchvision's own reference training scripts (references/classification
# and references/detection, unchanged, carried in .whl/ext/tvref by
# scripts/device/prepare_tv_references.sh), run on one GPU under memlife in
# one device call, on generated data: an image folder of 8 classes (the
# classification script reports top-5 accuracy) and a small COCO-format
# detection set. Traces come back in 15 MiB parts, $OUT/tvref.tgz.* (`cat`
# them into `tar xz`), for `memlife analyze` here. ONLY="name ..." records
# just those scenarios.
source "$(dirname "$0")/common.sh"
TVREF=$ROOT/.whl/ext/tvref
install_wheels /tmp/tvref-site $TVREF/wheels/*.whl
export PYTHONPATH=$ROOT/python:$ROOT/python/memlife/autoload:/tmp/tvref-site
export STACKS=${STACKS:-python} TMO=${TMO:-300} SUMARGS=--quiet
DATA=/tmp/tvref-images COCO=/tmp/tvref-coco
IMAGE_CLASSES=8 image_folder $DATA 64 train:128 val:64
# COCO layout (train2017/, val2017/, annotations/instances_*.json): images of
# 128 x 128 or 160 x 120 px with 1 to 3 filled boxes of 5 categories, each
# box with its polygon mask.
python3 - $COCO <<'PY'
import json, os, random, sys
from PIL import Image, ImageDraw
random.seed(0)
root, ann_id = sys.argv[1], 1
os.makedirs(os.path.join(root, "annotations"), exist_ok=True)
cats = [{"id": c, "name": f"c{c}", "supercategory": "shape"} for c in range(1, 6)]
for split, n in (("train", 32), ("val", 8)):
    os.makedirs(os.path.join(root, f"{split}2017"), exist_ok=True)
    images, anns = [], []
    for i in range(n):
        w, h = (128, 128) if i % 2 == 0 else (160, 120)
        img = Image.new("RGB", (w, h), (random.randint(0, 255), 120, 60))
        draw, image_id = ImageDraw.Draw(img), 1000 * (split == "val") + i + 1
        for _ in range(random.randint(1, 3)):
            bw, bh = random.randint(16, 48), random.randint(16, 48)
            x, y, c = random.randint(0, w - bw - 1), random.randint(0, h - bh - 1), random.randint(1, 5)
            draw.rectangle([x, y, x + bw, y + bh], fill=(40 * c, 255 - 40 * c, 200))
            anns.append({"id": ann_id, "image_id": image_id, "category_id": c, "bbox": [x, y, bw, bh],
                         "area": bw * bh, "iscrowd": 0,
                         "segmentation": [[x, y, x + bw, y, x + bw, y + bh, x, y + bh]]})
            ann_id += 1
        name = f"{split}_{i:04d}.png"
        img.save(os.path.join(root, f"{split}2017", name))
        images.append({"id": image_id, "file_name": name, "width": w, "height": h})
    with open(os.path.join(root, "annotations", f"instances_{split}2017.json"), "w") as f:
        json.dump({"images": images, "annotations": anns, "categories": cats}, f)
PY
# tv_run NAME DIR ARGS...: DIR/train.py with ARGS.
tv_run() {
  local name=$1 dir=$2; shift 2
  wanted "$name" || return 0
  rm -rf /tmp/tvref-out-$name && mkdir -p /tmp/tvref-out-$name
  (cd "$TVREF/$dir" && traced "$name" python3 train.py --output-dir /tmp/tvref-out-$name "$@")
}
say "torchvision references ($(cat $TVREF/REVISION)), one GPU"
CLS=(--data-path "$DATA" -b 16 -j 2 --epochs 2 --train-crop-size 64 --val-resize-size 72 --val-crop-size 64)
# ResNet-18 with fp16 AMP, an EMA of the weights every 2 steps, mixup and
# cutmix, TrivialAugment, label smoothing, cosine schedule with warm-up.
tv_run tvref_cls_resnet18_amp_ema classification "${CLS[@]}" --model resnet18 --amp --model-ema \
  --model-ema-steps 2 --mixup-alpha 0.2 --cutmix-alpha 1.0 --auto-augment ta_wide --label-smoothing 0.1 \
  --lr-scheduler cosineannealinglr --lr-warmup-epochs 1
# MobileNetV3 with transforms v2 on tensors, RMSprop, random erasing, EMA.
tv_run tvref_cls_mobilenet_v2transforms classification "${CLS[@]}" --model mobilenet_v3_small --opt rmsprop \
  --lr 0.01 --wd 0.00001 --random-erase 0.2 --use-v2 --backend tensor --model-ema --amp
# Faster R-CNN (MobileNetV3 FPN, random init), fp16 AMP, COCO evaluation.
tv_run tvref_det_fasterrcnn_amp detection --data-path $COCO --dataset coco -b 2 -j 2 --epochs 2 \
  --model fasterrcnn_mobilenet_v3_large_fpn --amp
# SSDlite with its augmentation, transforms v2 on tv_tensors.
tv_run tvref_det_ssdlite_v2 detection --data-path $COCO --dataset coco -b 4 -j 2 --epochs 2 \
  --model ssdlite320_mobilenet_v3_large --data-augmentation ssdlite --use-v2 --backend tv_tensor --amp

say traces
(cd $R && tar czf - traces ./*.out | split -b 15M - $OUT/tvref.tgz.)
ls -la $OUT
