#!/usr/bin/env bash
# Here, before scripts/device/torchtune_recipes.sh: torchtune 0.6.1 and what
# it imports that the device image lacks, as wheels for Python 3.12 in
# .whl/ext/torchtune (ignored by git, named in the device call's carry).
# torchao's wheel is carried without its compiled kernels (28 MB, built for
# another torch; torchtune's recipes here use none of them), which keeps
# the carry under its 64 MiB.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
dest=.whl/ext/torchtune/wheels
rm -rf "$dest" && mkdir -p "$dest"
pip download -q --no-deps --python-version 3.12 --only-binary=:all: -d "$dest" \
  torchtune==0.6.1 torchao==0.13.0 omegaconf==2.4.0 datasets==5.2.0 dill==0.4.1 \
  multiprocess==0.70.19 kagglehub==1.0.3 kagglesdk==0.1.38 torchdata==0.11.0
python3 - "$dest"/torchao-*.whl <<'PY'
import os, sys, zipfile
path = sys.argv[1]
stripped = path + ".tmp"
with zipfile.ZipFile(path) as src, zipfile.ZipFile(stripped, "w", zipfile.ZIP_DEFLATED) as dst:
    for item in src.infolist():
        if item.filename.endswith(".so"):
            continue
        data = src.read(item)
        if item.filename.endswith(".dist-info/RECORD"):
            data = b"".join(l for l in data.splitlines(True) if b".so," not in l)
        dst.writestr(item, data)
os.replace(stripped, path)
PY
du -sh "$dest"
