#!/usr/bin/env bash
# Here, before scripts/device/opacus_gpu.sh: Opacus's MNIST and CIFAR-10
# examples from its git mirror (fetch github:pytorch/opacus first; REV
# defaults to HEAD) and the wheels of opacus and opt-einsum, into
# .whl/ext/opacus, carried. Their synthetic data is made on the device.
set -eu
cd "$(git rev-parse --show-toplevel)"
O=.whl/ext/opacus
rm -rf $O && mkdir -p $O/wheels
git --git-dir=/work/.mirror/pytorch+opacus/repo archive "${REV:-HEAD}" examples/mnist.py examples/cifar10.py |
  tar -x -C $O
git --git-dir=/work/.mirror/pytorch+opacus/repo rev-parse --short "${REV:-HEAD}" > $O/REVISION
pip download -q --python-version 3.12 --only-binary=:all: --no-deps -d $O/wheels opacus==1.6.0 opt-einsum==3.4.0
ls -R $O
