# Sourced by the device scripts (run_all.sh, launch_overhead.sh): the
# environment, the build against the device venv's torch (into $B), and
# traced NAME CMD... which runs CMD under memlife's recorder with traces in
# $R/traces/NAME and its output in $R/NAME.out.
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
# install_wheels DIR WHEEL...: carried wheels into DIR (put on PYTHONPATH by the
# caller); nothing is fetched, no dependency is resolved, nothing compiled.
install_wheels() {
  local dir=$1
  shift
  python3 -m pip install -q --no-index --no-deps --no-compile --target "$dir" "$@"
}

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
# A call short of carry room may carry only .carry/share (the CMake package
# files): the recording targets include neither header library, and CMake
# needs their include folder only to exist. The analyzer is not built then.
if [ ! -d "$ROOT/.carry/include" ]; then
  echo "no .carry/include carried: analyzer not built here"
  mkdir -p "$ROOT/.carry/include"
  NO_ANALYZER=1
fi

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

# Whether scenario NAME is to run: ONLY="name ..." (the scripts' option)
# names the ones to run; unset, all run.
wanted() { [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $1 "* ]]; }

# Runs a command under memlife's recorder; traces land in $R/traces/$name.
traced() {
  local name=$1; shift
  mkdir -p $R/traces/$name
  LD_PRELOAD=$B/lib/libmemlife_preload.so MEMLIFE_OUTPUT_DIR=$R/traces/$name \
    MEMLIFE_TORCH_PLUGIN=$B/lib/libmemlife_torch.so MEMLIFE_STACKS=${STACKS:-all} MEMLIFE_OPS=${OPS:-top} \
    MEMLIFE_CUPTI=${MEMLIFE_CUPTI:-1} timeout ${TMO:-240} "$@" > $R/$name.out 2>&1
  echo "$name rc=$?"; tail -5 $R/$name.out
  [ "${SUMARGS:-}" = --quiet ] && return
  for t in $R/traces/$name/*.mltrace; do [ -f "$t" ] && $SUM "$t" ${SUMARGS:-} | tee -a $R/$name.summary.json; done
}

# in_dir DIR NAME CMD...: traced NAME CMD... run in DIR (a program of
# another project, run from its own folder).
in_dir() { local dir=$1 name=$2; shift 2; wanted "$name" || return 0; (cd "$dir" && traced "$name" "$@"); }

# analyze_traces [LINES]: `memlife analyze` of each $R/traces/NAME there,
# into $R/reports/NAME.json (and .txt, whose first LINES lines, default 12,
# are printed), with the analyzer at hand: this checkout's, carried in
# .whl/ext/analyzer with its elfutils libraries (scripts/device/
# prepare_libraries.sh), else the one built here when the image had
# libunwind and libdw; none, nothing.
analyze_traces() {
  local memlife=$B/bin/memlife libs=
  if [ -x "$ROOT/.whl/ext/analyzer/memlife" ]; then
    memlife=$ROOT/.whl/ext/analyzer/memlife libs=$ROOT/.whl/ext/analyzer/lib
  fi
  [ -x "$memlife" ] || return 0
  say analyze on the device
  mkdir -p "$R/reports"
  local d n
  for d in "$R"/traces/*/; do
    n=$(basename "$d")
    LD_LIBRARY_PATH=$libs "$memlife" analyze "$d" -o "$R/reports/$n.json" > "$R/reports/$n.txt" 2>&1
    echo "--- $n"; head -"${1:-12}" "$R/reports/$n.txt"
  done
}

# The launch-bound loop of gpt2_step.py, interleaved ROUNDS times: plain,
# torch's own history, memlife (stacks all/python/none, all without CUPTI,
# all with every nested op); the summary goes to $R/launch_overhead.txt.
launch_rounds() {
  local ROUNDS=$1
  say launch-bound loop, $ROUNDS interleaved rounds
  J=$R/launch_overhead.jsonl
  for round in $(seq "$ROUNDS"); do
    python3 scripts/device/gpt2_step.py launch >> $J
    python3 scripts/device/gpt2_step.py launch-history >> $J
    for v in all python none; do
      STACKS=$v SUMARGS=--quiet traced launch_$v python3 scripts/device/gpt2_step.py launch-memlife-$v > /dev/null
      grep us_per_iter $R/launch_$v.out >> $J
    done
    MEMLIFE_CUPTI=0 STACKS=all SUMARGS=--quiet traced launch_nocupti python3 scripts/device/gpt2_step.py launch-memlife-all-nocupti > /dev/null
    grep us_per_iter $R/launch_nocupti.out >> $J
    OPS=all STACKS=all SUMARGS=--quiet traced launch_opsall python3 scripts/device/gpt2_step.py launch-memlife-all-opsall > /dev/null
    grep us_per_iter $R/launch_opsall.out >> $J
    rm -rf $R/traces/launch_*
  done
  python3 scripts/device/summarize_launch.py $J | tee $R/launch_overhead.txt
}

# image_folder DIR PX SPLIT:COUNT...: an image folder of 2 classes (reddish
# and bluish PNGs of PX x PX; IMAGE_CLASSES=N for N, each its own shade),
# COUNT images per split, for the training scripts that read one (timm,
# pytorch/examples' imagenet, torchvision's references).
image_folder() {
  python3 - "$@" <<'PY'
import os, random, sys
from PIL import Image
random.seed(0)
root, px = sys.argv[1], int(sys.argv[2])
labels = int(os.environ.get("IMAGE_CLASSES", "2"))  # a, b, ...: each its own shade
for split, count in (arg.split(":") for arg in sys.argv[3:]):
    for k in range(labels):
        label = chr(ord("a") + k)
        d = os.path.join(root, split, label)
        os.makedirs(d, exist_ok=True)
        for i in range(int(count) // labels):
            shade = (200, 40, 40) if k == 0 else (40, 40, 200) if k == 1 else (40 + 25 * k, 200 - 20 * k, 40 * (k % 3))
            img = Image.new("RGB", (px, px), tuple(max(0, min(255, c + random.randint(-40, 40))) for c in shade))
            img.save(os.path.join(d, f"{i}.png"))
PY
}
