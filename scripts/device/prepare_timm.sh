#!/usr/bin/env bash
# Here, before scripts/device/timm_train.sh: huggingface/pytorch-image-models'
# train.py, validate.py and its own timm package into .whl/ext/timm, from a
# git clone or mirror (TIMM_GIT, a git directory; REV, default HEAD).
set -eu
cd "$(git rev-parse --show-toplevel)"
GIT=${TIMM_GIT:-/work/.mirror/huggingface+pytorch-image-models/repo}
rm -rf .whl/ext/timm && mkdir -p .whl/ext/timm
git --git-dir="$GIT" archive "${REV:-HEAD}" timm train.py validate.py | tar -x -C .whl/ext/timm
git --git-dir="$GIT" rev-parse --short "${REV:-HEAD}" > .whl/ext/timm/REVISION
du -sh .whl/ext/timm
