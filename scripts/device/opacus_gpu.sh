#!/usr/bin/env bash
# Opacus's own examples on CUDA, unchanged (scripts/device/prepare_opacus.sh
# here first, carrying .whl/ext/opacus): DP-SGD on synthetic MNIST
# (mnist.py, its default device cuda) and on synthetic CIFAR-10 (cifar10.py)
# with per-sample gradients from hooks, from torch.func and from expanded
# weights. The traces come back in $OUT/opacus_traces.tgz, for `memlife
# analyze` here. ONLY="name ..." records just those.
source "$(dirname "$0")/common.sh"
O=$ROOT/.whl/ext/opacus
python3 -c "import opacus" 2> /dev/null ||
  install_wheels /tmp/ml-opacus "$O"/wheels/*.whl
export PYTHONPATH=$ROOT/python:$ROOT/python/memlife/autoload:/tmp/ml-opacus
export STACKS=${STACKS:-python} TMO=${TMO:-200} SUMARGS=--quiet
python3 -c 'import opacus; print("opacus", opacus.__version__)'; cat $O/REVISION

say "Opacus's examples on CUDA (synthetic data)"
python3 $ROOT/scripts/external/make_mnist.py /tmp/op_data > /dev/null
python3 $ROOT/scripts/external/make_cifar10.py /tmp/op_data /tmp/op_patch > /dev/null
in_dir $O/examples op_mnist_cuda python3 mnist.py -n 2 --data-root /tmp/op_data
for mode in hooks functorch ew; do
  PYTHONPATH=$PYTHONPATH:/tmp/op_patch in_dir $O/examples op_cifar10_${mode}_cuda python3 cifar10.py \
    --epochs 2 --data-root /tmp/op_data --device cuda --batch-size 64 --batch-size-test 64 --workers 2 \
    --grad_sample_mode $mode
done
du -sh $R/traces/*
(cd $R && tar czf $OUT/opacus_traces.tgz traces ./*.out)
