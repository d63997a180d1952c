#!/usr/bin/env bash
# The torch plugin built from memlife's installed sources for the device's
# torch (issue 14), and loaded from the plugin cache by the preload when the
# configured plugin names another torch. One device call (carry [.carry]):
#   bash scripts/device/plugin_cache.sh
# 1. builds the recorder as the other device scripts do (common.sh);
# 2. builds the standalone plugin project ($B/share/memlife/torch-plugin,
#    what `memlife build-plugin` runs) for this torch, CUDA tracker included,
#    into a cache folder laid out as memlife's (<cache>/<torch version>/);
# 3. records seed 000's set_data release with the configured plugin
#    relabelled as built for another torch and MEMLIFE_PLUGIN_CACHE set, and
#    prints the trace's process notes and record counts: the preload must
#    say it loaded the plugin for this torch and record tensors and CUDA
#    allocations (the tracker came from the cache too).
source "$(dirname "$0")/common.sh"
V=$(python3 -c 'import torch; print(torch.__version__)')
CACHE=/tmp/ml-plugin-cache

say standalone plugin build for torch $V
start=$(date +%s)
cmake -S $B/share/memlife/torch-plugin -B /tmp/ml-plugin -G Ninja -DPython3_EXECUTABLE=$(which python3) \
  -DTORCH_CUDA_ARCH_LIST=9.0 > $R/plugin_cmake.log 2>&1 || tail -30 $R/plugin_cmake.log
ninja -C /tmp/ml-plugin -j16 > $R/plugin_build.log 2>&1 || grep -E "error|FAILED" -A5 $R/plugin_build.log | head -40
echo "standalone build: $(( $(date +%s) - start )) s"
ls -la /tmp/ml-plugin/lib
mkdir -p $CACHE/$V && cp /tmp/ml-plugin/lib/libmemlife_torch* $CACHE/$V/
cat $CACHE/$V/libmemlife_torch.so.torch-version

say configured plugin relabelled as built for another torch, cache set
mkdir -p /tmp/ml-other && cp $B/lib/libmemlife_torch.so /tmp/ml-other/
echo "0.0.0+another" > /tmp/ml-other/libmemlife_torch.so.torch-version
mkdir -p $R/traces/from_cache
LD_PRELOAD=$B/lib/libmemlife_preload.so MEMLIFE_OUTPUT_DIR=$R/traces/from_cache \
  MEMLIFE_TORCH_PLUGIN=/tmp/ml-other/libmemlife_torch.so MEMLIFE_PLUGIN_CACHE=$CACHE \
  MEMLIFE_STACKS=python timeout 240 python3 scripts/device/seed000_release.py set_data \
  > $R/from_cache.out 2>&1
echo "rc=$?"; tail -5 $R/from_cache.out
for t in $R/traces/from_cache/*.mltrace; do $SUM "$t" | head -c 1500; echo; done
say without the cache
mkdir -p $R/traces/no_cache
LD_PRELOAD=$B/lib/libmemlife_preload.so MEMLIFE_OUTPUT_DIR=$R/traces/no_cache \
  MEMLIFE_TORCH_PLUGIN=/tmp/ml-other/libmemlife_torch.so \
  MEMLIFE_STACKS=python timeout 240 python3 scripts/device/seed000_release.py set_data \
  > $R/no_cache.out 2>&1
echo "rc=$?"; grep memlife $R/no_cache.out | head -3
tar -C /tmp -czf $OUT/plugin_cache.tar.gz ml-results
