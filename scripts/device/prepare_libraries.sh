#!/usr/bin/env bash
# Here, before scripts/device/libraries_gpu.sh: programs of three libraries
# that nobody here wrote, into .whl/ext/libs from their git mirrors (fetch
# them first; REV_* default HEAD): gpytorch's own example tests (the whole
# package at that commit, run from its folder), pytorch_geometric's
# examples with generated Cora files in Planetoid's format
# (scripts/external/make_example_data.py) where they look for them
# (data/Planetoid and data/Cora beside examples/), and
# torchdiffeq's ODE demo, three of botorch's tutorials as scripts
# (scripts/external/notebook_script.py); pytest's wheels in case the device image lacks it;
# and the analyzer (.whl/ext/analyzer), carried too.
set -eu
cd "$(git rev-parse --show-toplevel)"
ROOT=$(pwd)
M=/work/.mirror
L=.whl/ext/libs
rm -rf $L && mkdir -p $L/pyg $L/torchdiffeq $L/wheels
git --git-dir=$M/cornellius-gp+gpytorch/repo archive "${REV_GPYTORCH:-HEAD}" gpytorch test/examples | tar -x -C $L
git --git-dir=$M/pyg-team+pytorch_geometric/repo archive "${REV_PYG:-HEAD}" examples | tar -x -C $L/pyg
git --git-dir=$M/rtqichen+torchdiffeq/repo archive "${REV_TORCHDIFFEQ:-HEAD}" examples/ode_demo.py |
  tar -x -C $L/torchdiffeq
test -f $L/torchdiffeq/examples/ode_demo.py  # the mirror lacks a demo GIF's blob: git says so
mkdir -p $L/botorch
for t in closed_loop_botorch_only turbo_1 fit_model_with_torch_optimizer; do
  git --git-dir=$M/pytorch+botorch/repo show "${REV_BOTORCH:-HEAD}:tutorials/$t/$t.ipynb" > $L/botorch/$t.ipynb
  python3 scripts/external/notebook_script.py $L/botorch/$t.ipynb > $L/botorch/$t.py
done
for r in cornellius-gp+gpytorch pyg-team+pytorch_geometric rtqichen+torchdiffeq pytorch+botorch; do
  echo "$r $(git --git-dir=$M/$r/repo rev-parse --short HEAD)"
done > $L/REVISIONS
(cd $L && python3 "$ROOT/scripts/external/make_example_data.py" > /dev/null &&
  mkdir -p pyg/data && cp -r planetoid pyg/data/Cora && mv planetoid pyg/data/Planetoid &&
  rm -rf bsds imgfolder ddpm cora)
(cd $L/wheels && pip download -q --python-version 3.12 --only-binary=:all: --no-deps \
  pytest==9.0.2 pluggy==1.6.0 iniconfig==2.1.0)
# This checkout's analyzer, stripped, with the elfutils libraries it links
# (the device image has neither): the traces are analyzed there.
A=.whl/ext/analyzer
rm -rf $A && mkdir -p $A/lib
strip -o $A/memlife "${MEMLIFE_BIN:-build/bin/memlife}"
cp -L "$(ldconfig -p | awk '/libdw.so.1 /{print $NF; exit}')" \
  "$(ldconfig -p | awk '/libelf.so.1 /{print $NF; exit}')" $A/lib/
cat $L/REVISIONS; du -sh $L $A
