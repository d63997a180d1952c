#!/usr/bin/env bash
# Project-MONAI/tutorials' segmentation scripts (carried in .whl/ext/monai by
# scripts/device/prepare_monai.sh, with monai's and nibabel's wheels; ignite's
# from .whl/tm), run unchanged on one GPU under memlife: the three
# distributed ones with one rank over NCCL (a plain DDP loop,
# MONAI's SupervisedTrainer on ignite with AMP and checkpoints, a
# SmartCacheDataset replacing its cache from a thread), a 2D UNet, and a 3D
# UNet validated by sliding-window inference. Traces come back in
# $OUT/monai.tar.gz for `memlife analyze` here. ONLY="name ..." as elsewhere.
source "$(dirname "$0")/common.sh"
M=$ROOT/.whl/ext/monai
install_wheels /tmp/monai-site "$M"/wheels/*.whl \
  "$ROOT"/.whl/tm/pytorch_ignite-*.whl
export PYTHONPATH=$ROOT/python:$ROOT/python/memlife/autoload:/tmp/monai-site
export STACKS=${STACKS:-python} TMO=${TMO:-400} SUMARGS=--quiet
python3 -c 'import monai, ignite; print("monai", monai.__version__, "ignite", ignite.__version__)'
say "MONAI tutorials ($(cat $M/REVISION)), one GPU"
DATA=/tmp/monai-data  # the 40 synthetic volumes, made by the first script and reused
D=$M/acceleration/distributed_training
# unet_training_ddp.py and _smartcache.py read --local_rank (torch.distributed.launch's
# old argument), which torchrun does not pass: one rank started as they expect.
ONE_RANK="env RANK=0 LOCAL_RANK=0 WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=29533"
for s in ddp smartcache; do
  # shellcheck disable=SC2086 # ONE_RANK is a command prefix
  in_dir $D monai_${s}_nccl $ONE_RANK python3 unet_training_$s.py -d $DATA --local_rank 0
done
in_dir $D monai_workflows_nccl python3 -m torch.distributed.run --standalone --nproc_per_node=1 \
  unet_training_workflows.py -d $DATA
in_dir $M/2d_segmentation/torch monai_2d_unet_array_cuda python3 unet_training_array.py
in_dir $M/3d_segmentation/torch monai_3d_unet_dict_cuda python3 unet_training_dict.py

say traces
du -sh $R/traces/*
(cd $R && tar czf $OUT/monai.tar.gz traces ./*.out)
ls -la $OUT
