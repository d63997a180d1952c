#!/usr/bin/env bash
# Here, before scripts/device/monai_gpu.sh: Project-MONAI/tutorials'
# segmentation scripts (they make their own synthetic volumes) into
# .whl/ext/monai, from a git clone or mirror (MONAI_GIT, a git directory;
# REV, default HEAD), with the wheels of monai and nibabel (the device image
# has neither; pytorch-ignite comes in .whl/tm).
set -eu
cd "$(git rev-parse --show-toplevel)"
GIT=${MONAI_GIT:-/work/.mirror/Project-MONAI+tutorials/repo}
M=.whl/ext/monai
rm -rf $M && mkdir -p $M/wheels
git --git-dir="$GIT" archive "${REV:-HEAD}" acceleration/distributed_training/unet_training_ddp.py \
  acceleration/distributed_training/unet_training_workflows.py \
  acceleration/distributed_training/unet_training_smartcache.py \
  2d_segmentation/torch/unet_training_array.py 3d_segmentation/torch/unet_training_dict.py |
  tar -x -C $M
git --git-dir="$GIT" rev-parse --short "${REV:-HEAD}" > $M/REVISION
pip download -q --python-version 3.12 --only-binary=:all: --no-deps -d $M/wheels \
  monai==1.6.1 nibabel==5.4.2
du -sh $M
