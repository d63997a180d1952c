#!/usr/bin/env bash
# Here, before scripts/device/tv_references.sh: torchvision's reference
# training scripts (references/classification and references/detection of
# a pytorch/vision git repository, at COMMIT), unchanged, into
# .whl/ext/tvref (ignored by git, named in the device call's carry), with
# pycocotools' wheel for Python 3.12 (the detection script's COCO reader).
#   scripts/device/prepare_tv_references.sh /path/to/vision.git [COMMIT]
# The README's run used upstream 428a54c96e82226c0d2d8522e9cbfdca64283da0.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
repo=${1:?a pytorch/vision git repository}
commit=${2:-428a54c96e82226c0d2d8522e9cbfdca64283da0}
dest=.whl/ext/tvref
rm -rf "$dest" && mkdir -p "$dest/wheels"
for dir in classification detection; do
  mkdir -p "$dest/$dir"
  git --git-dir="$repo" ls-tree --name-only "$commit" "references/$dir/" | grep '\.py$' |
    while read -r path; do git --git-dir="$repo" show "$commit:$path" > "$dest/$dir/$(basename "$path")"; done
done
echo "$commit" > "$dest/REVISION"
python3 -m pip download -q --no-deps --python-version 3.12 --only-binary=:all: \
  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 -d "$dest/wheels" pycocotools==2.0.11
du -sh "$dest"
