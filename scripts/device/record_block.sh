#!/usr/bin/env bash
# memlife.record() on the H200 (issue 14): the recorder loaded into a
# running process whose CUDA is initialised. One device call (carry
# [.carry]):   bash scripts/device/record_block.sh
# The device image has no libdw, so the memlife CLI is not built there; a
# stand-in answers `memlife run --print-environment` with this build's
# libraries (the CLI's own answer is tested on the host, cli test_run), and
# the blocks are analyzed on the host from the trace in record_block.tar.gz.
source "$(dirname "$0")/common.sh"
SHIM=/tmp/ml-shim; mkdir -p $SHIM
cat > $SHIM/memlife <<SHIM_EOF
#!/usr/bin/env bash
out=""; while [ \$# -gt 0 ]; do case "\$1" in -o) out=\$2; shift 2;; *) shift;; esac; done
mkdir -p "\$out"
printf '{"preload": "%s", "torch_plugin": "%s", "output_dir": "%s", "environment": {"MEMLIFE_OUTPUT_DIR": "%s", "MEMLIFE_RUN_ID": "device-record-block", "MEMLIFE_TORCH_PLUGIN": "%s", "MEMLIFE_STACKS": "python"}}\n' \
  "$B/lib/libmemlife_preload.so" "$B/lib/libmemlife_torch.so" "\$out" "\$out" "$B/lib/libmemlife_torch.so"
SHIM_EOF
chmod +x $SHIM/memlife
[ -x $B/bin/memlife ] && SHIM_BIN=$B/bin/memlife || SHIM_BIN=$SHIM/memlife
say "memlife.record() blocks (memlife: $SHIM_BIN)"
mkdir -p $R/traces/record_block
PYTHONPATH=$ROOT/python MEMLIFE_BIN=$SHIM_BIN timeout 300 python3 scripts/device/record_blocks_gpu.py \
  > $R/record_block.out 2>&1
echo "rc=$?"; tail -8 $R/record_block.out
trace=$(grep '^TRACE' $R/record_block.out | cut -d' ' -f2)
[ -f "$trace" ] && cp "$trace" $R/traces/record_block/ && $SUM "$trace" | head -c 2500; echo
tar -C /tmp -czf $OUT/record_block.tar.gz ml-results
