#!/usr/bin/env python3
"""Instructions per op of the launch-bound CPU loop (add, slice, sum on 64
floats), counted by callgrind: deterministic where wall time on a shared
machine is not. Plain python, then under memlife --stacks none and python
(and a second memlife build with --baseline-memlife), same loop and count.

usage: scripts/callgrind_overhead.py [--memlife build/bin/memlife]
                                     [--baseline-memlife OTHER/bin/memlife]
Needs valgrind and its headers (Debian: valgrind). Takes about a minute per
configuration.
"""

import argparse
import os
import pathlib
import re
import subprocess
import sys
import tempfile

from torch_overhead import LOOP_DEFINITION, OPS_PER_ITERATION

REPO = pathlib.Path(__file__).resolve().parents[1]
ITERS = 2000

LOOP = r"""
import ctypes, sys, torch
cg = ctypes.CDLL(sys.argv[1])
""" + LOOP_DEFINITION + r"""
loop(300)  # warm-up: caches, memlife's per-op learning
cg.cg_start()
loop(int(sys.argv[2]))
cg.cg_stop()
"""


def instructions(cmd, env):
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stderr
    # The dump at cg_stop is the first "Collected" line's part; the total
    # printed at exit covers only the instrumented stretch as well.
    m = re.search(r"Collected : (\d+)", out)
    if not m:
        raise SystemExit("callgrind printed no count:\n" + out[-2000:])
    return int(m.group(1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--memlife", default=str(REPO / "build" / "bin" / "memlife"))
    parser.add_argument("--baseline-memlife", default=None)
    args = parser.parse_args()
    python = os.path.realpath(sys.executable)  # not a pyenv shim: valgrind must see python
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        lib = tmp / "libcg_marks.so"
        subprocess.run(["cc", "-O1", "-shared", "-fPIC", str(REPO / "scripts/callgrind/cg_marks.c"),
                        "-o", str(lib)], check=True)
        (tmp / "loop.py").write_text(LOOP)
        grind = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
                 f"--callgrind-out-file={tmp}/cg.%p", python, str(tmp / "loop.py"), str(lib), str(ITERS)]
        env = dict(os.environ)

        def under(memlife, stacks, n):
            return [memlife, "run", "-o", str(tmp / f"t{n}"), "--stacks", stacks, "--", *grind]

        results = {"plain": instructions(grind, env)}
        for stacks in ("none", "python"):
            results[f"memlife_stacks_{stacks}"] = instructions(under(args.memlife, stacks, len(results)), env)
            if args.baseline_memlife:
                results[f"baseline_stacks_{stacks}"] = instructions(
                    under(args.baseline_memlife, stacks, len(results)), env)
    plain = results["plain"]
    for name, n in results.items():
        per_op = n / (ITERS * OPS_PER_ITERATION)
        print(f"{name:24s} {per_op:8.0f} instructions/op  {n / plain:5.2f}x plain")


if __name__ == "__main__":
    main()
