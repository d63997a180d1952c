#!/usr/bin/env bash
# The main job on the bundled example, from a fresh Debian machine: installs
# what memlife needs and builds it (scripts/setup.sh), records
# examples/residual_view.py (a ZeRO-3-like leak: views into a padded buffer
# outlive the buffer's release), shows what `memlife analyze` finds, and
# writes the HTML report.
#
#   scripts/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
out=build/demo
rm -rf "$out"
mkdir -p "$out"
build/bin/memlife run -o "$out/traces" -- python3 examples/residual_view.py
build/bin/memlife analyze "$out/traces" -o "$out/report.json"
build/bin/memlife report "$out/report.json" -o "$out/report.html"
echo "demo.sh: JSON report $out/report.json, HTML report $out/report.html" >&2
# The gate a CI job would apply: exits 1 here, since the example leaks.
if build/bin/memlife check "$out/report.json" --junit "$out/junit.xml"; then
  echo "demo.sh: memlife check found nothing to fail on (unexpected for this example)" >&2
  exit 1
fi
echo "demo.sh: memlife check failed the gate, as it should on this leaky example" >&2
