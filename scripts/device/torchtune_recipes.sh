#!/usr/bin/env bash
# torchtune's own recipes (torchtune 0.6.1 and what it imports, carried in
# .whl/ext/torchtune by scripts/device/prepare_torchtune.sh), run unchanged
# on one GPU under memlife in one device call, on the tiny random Llama 2,
# tokenizer and data that scripts/external/torchtune_recipes.py writes.
# The distributed recipes run as one rank over NCCL. Traces come back in
# 15 MiB parts, $OUT/torchtune.tgz.* (`cat` them into `tar xz`), for
# `memlife analyze` here. ONLY="name ..." records just those scenarios.
# The carry is tight: carry .carry/share, not .carry.
source "$(dirname "$0")/common.sh"
install_wheels /tmp/torchtune-site $ROOT/.whl/ext/torchtune/wheels/*.whl
export PYTHONPATH=$ROOT/python:$ROOT/python/memlife/autoload:/tmp/torchtune-site
export STACKS=${STACKS:-python} TMO=${TMO:-150} SUMARGS=--quiet
TT=/tmp/torchtune-work
rm -rf $TT
TORCHTUNE_DEVICE=cuda python3 scripts/external/torchtune_recipes.py $TT > $R/configs.txt 2>&1 ||
  { tail -20 $R/configs.txt; exit 1; }
say "torchtune $(python3 -c 'import torchtune; print(torchtune.__version__)' 2>/dev/null), one GPU"
while read -r recipe config; do
  [ -f "$config" ] || continue
  name=tt_$(basename "$config" .yaml)
  wanted "$name" || continue
  launch=()
  [[ $recipe == *distributed* ]] && launch=(--nproc_per_node 1)
  (cd $TT && traced "$name" python3 /tmp/torchtune-site/bin/tune run "${launch[@]}" "$recipe" \
     --config "$config")
done < <(grep -E "^[a-z_]+ /" $R/configs.txt)

say traces
(cd $R && tar czf - traces ./*.out | split -b 15M - $OUT/torchtune.tgz.)
ls -la $OUT
