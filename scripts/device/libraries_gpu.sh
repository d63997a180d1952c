#!/usr/bin/env bash
# Programs of libraries nobody here wrote, on the GPU under memlife, in one
# device call (after scripts/device/prepare_libraries.sh here): gpytorch's
# own example tests that have CUDA variants (only those: the CPU ones run
# here), pytorch_geometric's examples on generated Cora, botorch's
# tutorials, torchdiffeq's ODE demo with and without the adjoint,
# pytorch-ignite's examples, torchrl's DQN, stable-baselines3's tests. Analyzed
# there by the carried analyzer: $OUT/reports.tgz (reports and outputs),
# $OUT/small_traces.tgz.
# ONLY="name ..." records just those scenarios.
source "$(dirname "$0")/common.sh"
L=$ROOT/.whl/ext/libs
python3 -c "import pytest" 2> /dev/null ||
  install_wheels /tmp/ml-libext "$L"/wheels/*.whl
# The RL and ignite libraries, each only where the image lacks it (an
# image's own copy and its dependencies come first).
need() {
  local module=$1; shift
  python3 -c "import $module" 2> /dev/null && return 0
  for w in "$@"; do install_wheels /tmp/ml-libext "$L"/rl_wheels/"$w"-*.whl; done
}
need torchrl torchrl tensordict hoptorch pyvers orjson
need ignite pytorch_ignite
need stable_baselines3 stable_baselines3
need gymnasium gymnasium farama_notifications cloudpickle
need hydra hydra_core omegaconf antlr4_python3_runtime
need fire fire termcolor
export PYTHONPATH=$ROOT/python:$ROOT/python/memlife/autoload:/tmp/ml-libext
python3 -c 'import torchrl, tensordict, ignite, stable_baselines3; print("torchrl", torchrl.__version__, "tensordict", tensordict.__version__, "ignite", ignite.__version__, "stable_baselines3", stable_baselines3.__version__)'
export STACKS=${STACKS:-python} TMO=${TMO:-200} SUMARGS=--quiet
python3 -c 'import gpytorch, linear_operator, torch_geometric, torchdiffeq; print("gpytorch", gpytorch.__version__, "linear_operator", linear_operator.__version__, "torch_geometric", torch_geometric.__version__)'
cat $L/REVISIONS

say "gpytorch's example tests, CUDA variants (its package from the checkout)"
for f in $(grep -l "_cuda" $L/test/examples/test_*.py); do
  t=$(basename $f .py)
  in_dir $L gp_${t#test_}_cuda python3 -m pytest -q -x -p no:cacheprovider -k cuda test/examples/$t.py
done

say "pytorch_geometric examples on CUDA"
E=$L/pyg/examples
in_dir $E pyg_gcn_cuda python3 gcn.py --epochs 100
in_dir $E pyg_gcn_gdc_cuda python3 gcn.py --use_gdc --epochs 60
in_dir $E pyg_gat_cuda python3 gat.py --epochs 60
in_dir $E pyg_link_pred_cuda python3 link_pred.py
in_dir $E pyg_autoencoder_cuda python3 autoencoder.py --epochs 60 --variational
in_dir $E pyg_arma_cuda python3 arma.py
in_dir $E pyg_super_gat_cuda python3 super_gat.py
in_dir $E/compile pyg_compile_gcn_cuda python3 gcn.py

in_dir $E pyg_sgc_cuda python3 sgc.py
in_dir $E pyg_tagcn_cuda python3 tagcn.py

say "botorch's tutorials on CUDA (the device image's botorch), at their smoke-test size"
export MPLBACKEND=Agg
for t in closed_loop_botorch_only turbo_1 fit_model_with_torch_optimizer; do
  SMOKE_TEST=1 in_dir $L/botorch bo_${t}_cuda python3 $t.py
done

say "torchdiffeq's ODE demo on CUDA"
in_dir $L/torchdiffeq/examples ode_demo_cuda python3 ode_demo.py --niters 200 --test_freq 50
in_dir $L/torchdiffeq/examples ode_demo_adjoint_cuda python3 ode_demo.py --niters 200 --test_freq 50 --adjoint

say "pytorch-ignite's MNIST and CIFAR-10 examples on CUDA (synthetic data)"
# MNIST in torchvision's raw format; CIFAR-10 in its pickled batches, whose
# md5 the sitecustomize.py written beside them waives.
python3 $ROOT/scripts/external/make_mnist.py $L/ignite/mnist
python3 $ROOT/scripts/external/make_cifar10.py $L/cifar10 $L/cifar10_patch
in_dir $L/ignite/mnist ig_mnist_cuda python3 mnist.py --epochs 2
C10="run --data_path $L/cifar10 --output_path /tmp/ig_c10 --batch_size 64 --num_workers 2
  --num_epochs 3 --num_warmup_epochs 1 --validate_every 1 --checkpoint_every 10"
# shellcheck disable=SC2086 # C10 is a list of arguments
PYTHONPATH=$PYTHONPATH:$L/cifar10_patch in_dir $L/ignite/cifar10 ig_cifar10_cuda python3 main.py $C10
# shellcheck disable=SC2086
PYTHONPATH=$PYTHONPATH:$L/cifar10_patch in_dir $L/ignite/cifar10 ig_cifar10_amp_cuda \
  python3 main.py $C10 --with_amp True

say "torchrl's DQN on CartPole, on CUDA"
in_dir $L/torchrl/dqn rl_dqn_cartpole_cuda python3 dqn_cartpole.py collector.total_frames=20000 \
  collector.init_random_frames=2000 collector.annealing_frames=10000 logger.backend=csv \
  logger.test_interval=10000 loss.num_updates=20 hydra.run.dir=/tmp/rl_dqn

say "stable-baselines3's own tests (device auto: CUDA)"
for t in test_run test_save_load test_her; do
  in_dir $L sb3_${t}_cuda python3 -m pytest -q -x -p no:cacheprovider sb3_tests/$t.py
done

# Their traces are too large to come back whole (64 MiB a call): this
# checkout's analyzer, carried (prepare_libraries.sh), analyzes them here
# and the reports come back, with the traces under 3 MB.
analyze_traces 1
du -sh $R/traces/* | sort -h | tail -5
(cd $R && tar czf $OUT/reports.tgz reports ./*.out)
(cd $R && du -s traces/* | awk '$1 < 3000 {print $2}' > small.txt && tar czf $OUT/small_traces.tgz -T small.txt)
ls -la $OUT
