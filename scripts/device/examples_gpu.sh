#!/usr/bin/env bash
# pytorch/examples' GPU programs (carried in .whl/ext/examples by
# scripts/device/prepare_examples.sh), run under memlife on one GPU, in one
# device call. The distributed examples refuse to start on fewer than 2 GPUs; that
# check alone is changed (min_gpus 2 -> 1), then they run under torchrun with
# one rank. Traces come back in $OUT/examples.tgz.* for `memlife analyze`
# here. ONLY="name ..." records just those scenarios.
source "$(dirname "$0")/common.sh"
EXT=$ROOT/.whl/ext
install_wheels /tmp/ml-pyext "$EXT"/wheels/*.whl > $R/pip.log 2>&1 || tail -5 $R/pip.log
export PYTHONPATH=$ROOT/python:$ROOT/python/memlife/autoload:/tmp/ml-pyext
export STACKS=${STACKS:-python} TMO=${TMO:-200} SUMARGS=--quiet
W=/tmp/ml-examples
rm -rf $W && cp -r $EXT/examples $W
sed -i 's/_min_gpu_count = 2/_min_gpu_count = 1/' $W/distributed/*/example.py $W/distributed/minGPT-ddp/mingpt/main.py
DATA=/tmp/ml-images
image_folder $DATA 256 train:128 val:64
TR="torchrun --standalone --nproc_per_node=1"
say "pytorch/examples ($(cat $W/REVISION)), one GPU"
in_dir $W/distributed/FSDP2 fsdp2_example $TR example.py
in_dir $W/distributed/FSDP2 fsdp2_example_resumed $TR example.py
in_dir $W/distributed/FSDP2 fsdp2_example_dcp_mp_prefetch $TR example.py --dcp-api --mixed-precision --explicit-prefetching
in_dir $W/distributed/FSDP2 fsdp2_example_dcp_resumed $TR example.py --dcp-api --mixed-precision --explicit-prefetching
in_dir $W/distributed/ddp ddp_example $TR example.py
MG="data_config.path=data/input.txt trainer_config.save_every=1 trainer_config.data_loader_workers=2"
in_dir $W/distributed/minGPT-ddp/mingpt mingpt_ddp_amp $TR main.py $MG trainer_config.max_epochs=2
in_dir $W/distributed/minGPT-ddp/mingpt mingpt_ddp_amp_resumed $TR main.py $MG trainer_config.max_epochs=3
in_dir $W/imagenet imagenet_dataparallel python3 main.py $DATA -a resnet18 --epochs 2 -b 32 -j 2 --print-freq 4
in_dir $W/imagenet imagenet_dataparallel_resumed python3 main.py $DATA -a resnet18 --epochs 3 -b 32 -j 2 --print-freq 4 --resume checkpoint.pth.tar
in_dir $W/imagenet imagenet_evaluate python3 main.py $DATA -a resnet18 -b 32 -j 2 --evaluate --resume model_best.pth.tar
in_dir $W/imagenet imagenet_ddp_spawn python3 main.py $DATA -a resnet50 --epochs 1 -b 32 -j 2 --print-freq 4 \
  --multiprocessing-distributed --dist-url tcp://127.0.0.1:23456 --dist-backend nccl --world-size 1 --rank 0
# word_language_model updates its parameters by hand through `.data`
# (`p.data.add_(p.grad, alpha=-lr)`): its steps are the ends of backward
# passes after an update, which on a GPU only the plugin's watch of the
# parameters' storages sees. Generated text in place of WikiText-2.
WLM_DATA=/tmp/ml-wlm-data
python3 - $WLM_DATA <<'PY'
import os, random, sys
random.seed(0)
words = ["w%d" % i for i in range(2000)]
os.makedirs(sys.argv[1], exist_ok=True)
for name, lines in (("train.txt", 3000), ("valid.txt", 300), ("test.txt", 300)):
    with open(os.path.join(sys.argv[1], name), "w") as f:
        for _ in range(lines):
            f.write(" ".join(random.choices(words, k=12)) + "\n")
PY
in_dir $W/word_language_model wlm_lstm_cuda python3 main.py --accel --data $WLM_DATA --model LSTM --epochs 2 \
  --save /tmp/ml-wlm-lstm.pt
in_dir $W/word_language_model wlm_transformer_cuda python3 main.py --accel --data $WLM_DATA --model Transformer \
  --epochs 2 --save /tmp/ml-wlm-tf.pt
say traces
# In parts of 15 MB (a file that comes back holds at most 16 MiB):
# cat examples.tgz.* | tar xz
(cd $R && tar czf - traces *.out | split -b 15M - $OUT/examples.tgz.)
ls -la $OUT
