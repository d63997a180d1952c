#!/usr/bin/env bash
# Here, before scripts/device/torchtitan.sh: pytorch/torchtitan v0.2.2's
# sources into .whl/ext/torchtitan (from a git clone or mirror of
# pytorch/torchtitan: TORCHTITAN_GIT, a git directory) and the Python
# packages the device image lacks into .whl/tt (Python 3.12 wheels).
# The c4_test sample torchtitan ships is replaced by generated text in the
# same JSON lines format (the mirror lacks that file; nothing is fetched on
# the device).
set -eu
cd "$(git rev-parse --show-toplevel)"
GIT=${TORCHTITAN_GIT:-/work/.mirror/pytorch+torchtitan/repo}
rm -rf .whl/ext/torchtitan .whl/tt && mkdir -p .whl/ext/torchtitan .whl/tt
git --git-dir="$GIT" archive v0.2.2 torchtitan tests/assets/tokenizer run_train.sh |
  tar -x -C .whl/ext/torchtitan
mkdir -p .whl/ext/torchtitan/tests/assets/c4_test
python3 - .whl/ext/torchtitan/tests/assets/c4_test/data.json <<'PY'
import json, random, sys
random.seed(0)
words = ("the of and to in a is that for it as was with be by on not he this are or his from "
         "at which but have an they you were her she there one all we their has been if more "
         "when will would who so no time people year new world state work life day part school "
         "make use two back way good country first government after most years city system man "
         "place same each house program large small number right under public also family write "
         "study group play point during turn young thought water word until long").split()
with open(sys.argv[1], "w") as f:
    for i in range(1200):
        text = " ".join(random.choice(words) for _ in range(random.randint(150, 450)))
        f.write(json.dumps({"text": text.capitalize() + ".", "url": f"https://example.com/{i}"}) + "\n")
PY
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -d .whl/tt torchdata==0.11.0 datasets==4.4.2 dill==0.4.0 multiprocess==0.70.18 tyro==1.0.17 \
  docstring-parser==0.18.0 typeguard==4.6.1 shtab==1.13.0
du -sh .whl/ext/torchtitan .whl/tt
