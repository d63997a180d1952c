#!/usr/bin/env bash
# The whole GPU run on the lent H200, in one call:
#   run from the repo root with OUT set; header-only deps travel in .carry/
#   (scripts/device/prepare_carry.sh makes it here).
# Builds the recorder, the torch plugin and the CUDA tracker against the
# device venv's torch, then records every GPU scenario and writes traces,
# summaries and timings into $OUT/results.tar.gz (+ log.txt, figures.json).
set -u
OUT=${OUT:-/tmp/memlife-out}
mkdir -p "$OUT"
ROOT=$(pwd)
R=/tmp/ml-results
rm -rf "$R" && mkdir -p "$R/traces"
exec > >(tee "$OUT/log.txt") 2>&1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1
say() { echo "=== $*"; }

say environment
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
python3 -c 'import torch,transformers;print("torch",torch.__version__,"cuda",torch.version.cuda,"nccl",torch.cuda.nccl.version(),"transformers",transformers.__version__)'
TORCH_PREFIX=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')
which nvcc compute-sanitizer cmake ninja g++ | tr '\n' ' '; echo

# pkg-config stand-ins where the image lacks libunwind/libdw: the targets
# built here (preload, plugin, tracker) do not link them.
PCDIR=/tmp/ml-pc; mkdir -p $PCDIR
for m in libunwind libdw; do
  if ! pkg-config --exists $m 2>/dev/null; then
    echo "no $m on this image: stand-in .pc (analyzer not built here)"
    printf 'Name: %s\nDescription: stand-in\nVersion: 0\nLibs:\nCflags:\n' $m > $PCDIR/$m.pc
    NO_ANALYZER=1
  fi
done
export PKG_CONFIG_PATH=$PCDIR:${PKG_CONFIG_PATH:-}

say build
B=/tmp/ml-build
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMEMLIFE_BUILD_TESTS=OFF \
  -DMEMLIFE_BUILD_BENCH=OFF -DTORCH_CUDA_ARCH_LIST=9.0 \
  -DCMAKE_PREFIX_PATH="$TORCH_PREFIX;$ROOT/.carry" -DCMAKE_CXX_FLAGS="-I$ROOT/.carry/include" \
  > $R/cmake.log 2>&1 || { tail -40 $R/cmake.log; }
TARGETS="memlife_preload memlife_torch memlife_torch_cuda"
[ -z "${NO_ANALYZER:-}" ] && TARGETS="$TARGETS memlife"
ninja -C $B -j16 $TARGETS > $R/build.log 2>&1 || { grep -E "error|FAILED" -A5 $R/build.log | head -60; }
ls -la $B/lib $B/bin 2>/dev/null
g++ -std=c++20 -O2 -Iinclude -Ilib scripts/device/gpu_trace_summary.cc lib/format/*.cc -o $B/gpu_trace_summary
SUM=$B/gpu_trace_summary

# Runs a command under memlife's recorder; traces land in $R/traces/$name.
traced() {
  local name=$1; shift
  mkdir -p $R/traces/$name
  LD_PRELOAD=$B/lib/libmemlife_preload.so MEMLIFE_OUTPUT_DIR=$R/traces/$name \
    MEMLIFE_TORCH_PLUGIN=$B/lib/libmemlife_torch.so MEMLIFE_STACKS=${STACKS:-all} \
    MEMLIFE_CUPTI=${MEMLIFE_CUPTI:-1} timeout ${TMO:-240} "$@" > $R/$name.out 2>&1
  echo "$name rc=$?"; tail -5 $R/$name.out
  [ "${SUMARGS:-}" = --quiet ] && return
  for t in $R/traces/$name/*.mltrace; do [ -f "$t" ] && $SUM "$t" ${SUMARGS:-} | tee -a $R/$name.summary.json; done
}

say leaky CUDA program vs compute-sanitizer
nvcc -O2 -cudart shared -arch=sm_90 tests/gpu/leaky_cuda.cu -o $B/leaky_cuda_shared
nvcc -O2 -arch=sm_90 tests/gpu/leaky_cuda.cu -o $B/leaky_cuda_static
traced leaky_shared $B/leaky_cuda_shared
traced leaky_static $B/leaky_cuda_static
timeout 120 compute-sanitizer --leak-check full $B/leaky_cuda_shared > $R/leaky_sanitizer.out 2>&1
echo "sanitizer rc=$?"; grep -E "Leaked|LEAK SUMMARY|ERROR SUMMARY" $R/leaky_sanitizer.out | head -12

say seed 001
for m in unwaited waited compiled; do TMO=300 traced seed001_$m python3 scripts/device/seed001_collectives.py $m; grep -i "unwaited" $R/seed001_$m.out | head -3; done

say seed 000
for m in set_data resize0; do traced seed000_$m python3 scripts/device/seed000_release.py $m; done

say GPT-2 oracle
SUMARGS="--from oracle_begin --to oracle_end --events $R/gpt2_memlife_events.json" STACKS=python GPT2_STEPS=3 \
  traced gpt2_oracle python3 scripts/device/gpt2_step.py oracle $R/gpt2_torch_events.json
python3 scripts/device/compare_oracle.py $R/gpt2_torch_events.json $R/gpt2_memlife_events.json | tee $R/oracle.json

say overhead
# Side by side, repeated; the launch-bound loop also with fewer stacks,
# without CUPTI, and with the empty-RecordFunction floor, to place the cost.
for rep in ${REPS:-1 2 3}; do
  python3 scripts/device/gpt2_step.py time | tee -a $R/overhead.jsonl
  STACKS=all traced gpt2_time_ml$rep python3 scripts/device/gpt2_step.py time-memlife
  grep ms_per_step $R/gpt2_time_ml$rep.out >> $R/overhead.jsonl
  python3 scripts/device/gpt2_step.py history | tee -a $R/overhead.jsonl
  python3 scripts/device/gpt2_step.py launch | tee -a $R/overhead.jsonl
  for v in all python none; do
    STACKS=$v SUMARGS=--quiet traced launch_ml_${v}_$rep python3 scripts/device/gpt2_step.py launch-memlife-$v
    grep us_per_iter $R/launch_ml_${v}_$rep.out >> $R/overhead.jsonl
  done
  MEMLIFE_CUPTI=0 STACKS=all traced launch_ml_nocupti_$rep python3 scripts/device/gpt2_step.py launch-memlife-all-nocupti
  grep us_per_iter $R/launch_ml_nocupti_$rep.out >> $R/overhead.jsonl
  MEMLIFE_CUPTI=0 MEMLIFE_TORCH_FLOOR=1 traced launch_floor_$rep python3 scripts/device/gpt2_step.py launch-rf-floor
  grep us_per_iter $R/launch_floor_$rep.out >> $R/overhead.jsonl
  python3 scripts/device/gpt2_step.py launch-history | tee -a $R/overhead.jsonl
done
rm -rf $R/traces/gpt2_time_ml* $R/traces/launch_*   # large, timing only
du -sh $R/traces/*
cp $R/oracle.json $R/overhead.jsonl $OUT/ 2>/dev/null
tar -C /tmp -czf $OUT/results.tar.gz ml-results
ls -la $OUT
