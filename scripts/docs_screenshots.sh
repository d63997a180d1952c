#!/usr/bin/env bash
# Regenerates the report screenshots in docs/ (README, "Reports"): a leaky
# CPU run of a real framework (HF Trainer keeping every step's logits), a
# torchrun run (two gloo ranks with an all-reduce never waited) and a GPU
# trace recorded on the H200 (committed under traces/gpu). Headless
# Chromium, 1400x1000, each page opened on its first finding.
#
#   scripts/docs_screenshots.sh            # memlife from build/bin
set -euo pipefail
cd "$(dirname "$0")/.."
memlife=${MEMLIFE:-build/bin/memlife}
chromium=${CHROMIUM:-$(command -v chromium || command -v chromium-browser)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$memlife" run -o "$work/cpu" -- python3 tests/corpus/leaky/hf_trainer_keeps_logits.py
"$memlife" report "$work/cpu" -o "$work/cpu.html"
"$memlife" run -o "$work/torchrun" -- python3 -m torch.distributed.run --standalone \
  --nproc_per_node=2 tests/corpus/leaky/dist_unwaited_allreduce.py
"$memlife" report "$work/torchrun" -o "$work/torchrun.html"
"$memlife" report traces/gpu/corpus/gpu_train_leak -o "$work/gpu.html"

for name in cpu torchrun gpu; do
  "$chromium" --headless=new --no-sandbox --disable-gpu --no-first-run \
    --user-data-dir="$work/profile" --virtual-time-budget=5000 --window-size=1400,1000 \
    --screenshot="docs/report-$name.png" "file://$work/$name.html#finding=0" 2>/dev/null
  echo "wrote docs/report-$name.png"
done
