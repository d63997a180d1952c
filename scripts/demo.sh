#!/usr/bin/env bash
# The main job on the bundled example: builds memlife, records
# examples/residual_view.py (a ZeRO-3-like leak: views into a padded buffer
# outlive the buffer's release) and shows what `memlife analyze` finds.
#
#   scripts/demo.sh            (run scripts/setup.sh first on a fresh machine)
set -euo pipefail
cd "$(dirname "$0")/.."

example=examples/residual_view.py
if [[ ! -f $example ]]; then
  echo "demo.sh: $example is not written yet" >&2
  exit 2
fi
out=build/demo-traces
cmake --preset default >/dev/null
cmake --build --preset default -j "${MEMLIFE_JOBS:-$(nproc)}"
rm -rf "$out"
build/bin/memlife run -o "$out" -- python3 "$example"
build/bin/memlife analyze "$out"
