#!/usr/bin/env bash
# Here, before scripts/device/libraries_gpu.sh: programs of libraries
# that nobody here wrote, into .whl/ext/libs from their git mirrors (fetch
# them first; REV_* default HEAD): gpytorch's own example tests (the whole
# package at that commit, run from its folder), pytorch_geometric's
# examples with generated Cora files in Planetoid's format
# (scripts/external/make_example_data.py) where they look for them
# (data/Planetoid and data/Cora beside examples/), and
# torchdiffeq's ODE demo, three of botorch's tutorials as scripts
# (scripts/external/notebook_script.py); pytorch-ignite's, torchrl's and
# stable-baselines3's (below); pytest's wheels in case the device image lacks it,
# and those of the three libraries with what they need;
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
# pytorch-ignite's MNIST and CIFAR-10 examples (their synthetic data is
# made on the device: the carried files must stay small), torchrl's DQN on
# CartPole, and stable-baselines3's own tests.
git --git-dir=$M/pytorch+ignite/repo archive "${REV_IGNITE:-HEAD}" examples/mnist/mnist.py examples/cifar10 |
  tar -x -C $L && mv $L/examples $L/ignite
git --git-dir=$M/pytorch+rl/repo archive "${REV_TORCHRL:-HEAD}" sota-implementations/dqn |
  tar -x -C $L && mv $L/sota-implementations $L/torchrl
git --git-dir=$M/DLR-RM+stable-baselines3/repo archive "${REV_SB3:-HEAD}" tests | tar -x -C $L &&
  mv $L/tests $L/sb3_tests
for r in cornellius-gp+gpytorch pyg-team+pytorch_geometric rtqichen+torchdiffeq pytorch+botorch \
  pytorch+ignite pytorch+rl DLR-RM+stable-baselines3; do
  echo "$r $(git --git-dir=$M/$r/repo rev-parse --short HEAD)"
done > $L/REVISIONS
(cd $L && python3 "$ROOT/scripts/external/make_example_data.py" > /dev/null &&
  mkdir -p pyg/data && cp -r planetoid pyg/data/Cora && mv planetoid pyg/data/Planetoid &&
  rm -rf bsds imgfolder ddpm cora)
(cd $L/wheels && pip download -q --python-version 3.12 --only-binary=:all: --no-deps \
  pytest==9.0.2 pluggy==1.6.0 iniconfig==2.1.0 &&
  pip download -q --python-version 3.12 --only-binary=:all: --no-deps -d ../rl_wheels \
    torchrl==0.14.1 tensordict==0.14.3 pytorch-ignite==0.5.5 stable-baselines3==2.9.2 \
    hydra-core==1.3.8 omegaconf==2.3.1 fire==0.7.1 termcolor==3.3.0 gymnasium==1.4.0 \
    farama-notifications==0.0.6 cloudpickle==3.1.3 hoptorch==0.1.4 pyvers==0.2.3 \
    orjson==3.13.0 &&
  pip wheel -q --no-deps -w ../rl_wheels antlr4-python3-runtime==4.9.3)  # sdist only
# This checkout's analyzer, stripped, with the elfutils libraries it links
# (the device image has neither): the traces are analyzed there.
A=.whl/ext/analyzer
rm -rf $A && mkdir -p $A/lib
strip -o $A/memlife "${MEMLIFE_BIN:-build/bin/memlife}"
cp -L "$(ldconfig -p | awk '/libdw.so.1 /{print $NF; exit}')" \
  "$(ldconfig -p | awk '/libelf.so.1 /{print $NF; exit}')" $A/lib/
cat $L/REVISIONS; du -sh $L $A
