#!/usr/bin/env bash
# Here, before scripts/device/examples_gpu.sh: pytorch/examples' programs that
# need a GPU (FSDP2, DDP, minGPT-DDP, ImageNet) and word_language_model into
# .whl/ext/examples from a git mirror (EXAMPLES_GIT, a git directory; REV,
# default HEAD), and the wheels minGPT-DDP needs and the device image lacks
# (Hydra; boto3, which its trainer imports) into .whl/ext/wheels, built or
# downloaded here (antlr4 4.9 is a source package).
set -eu
cd "$(git rev-parse --show-toplevel)"
GIT=${EXAMPLES_GIT:-/work/.mirror/pytorch+examples/repo}
rm -rf .whl/ext/examples .whl/ext/wheels && mkdir -p .whl/ext/examples .whl/ext/wheels
git --git-dir="$GIT" archive "${REV:-HEAD}" distributed/FSDP2 distributed/ddp distributed/minGPT-ddp imagenet \
  word_language_model/main.py word_language_model/model.py word_language_model/data.py |
  tar -x -C .whl/ext/examples
git --git-dir="$GIT" rev-parse --short "${REV:-HEAD}" > .whl/ext/examples/REVISION
(cd .whl/ext/wheels &&
  pip download -q --python-version 3.12 --only-binary=:all: --no-deps hydra-core==1.3.8 omegaconf==2.3.0 \
    boto3==1.44.18 botocore==1.44.18 s3transfer==0.19.3 jmespath==1.1.0 &&
  pip wheel -q --no-deps antlr4-python3-runtime==4.9.3)
du -sh .whl/ext/examples .whl/ext/wheels
