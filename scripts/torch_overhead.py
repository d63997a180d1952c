#!/usr/bin/env python3
"""ns per op of a launch-bound loop of small CPU ops (adds, slices, sums on
64-element tensors), in one run: plain, the floor (only an empty global
RecordFunction callback with memlife's needsInputs/needsOutputs/scopes,
MEMLIFE_TORCH_FLOOR=1), and under memlife with --stacks none / python.

usage: scripts/torch_overhead.py [--memlife build-torch/bin/memlife] [--iters N]
                                 [--baseline-memlife OTHER/bin/memlife]
--baseline-memlife measures another memlife build in the same run (before/after).
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]

# The measured loop (3 ops per iteration), also counted by
# callgrind_overhead.py. Needs `torch` imported.
LOOP_DEFINITION = r"""
torch.set_num_threads(1)
x = torch.randn(64)
def loop(n):
    for _ in range(n):
        y = x + 1
        z = y[1:33]
        z.sum()
"""
OPS_PER_ITERATION = 3

LOOP = r"""
import json, sys, time
import torch
iters = int(sys.argv[1])
OPS = %d
""" % OPS_PER_ITERATION + LOOP_DEFINITION + r"""
loop(2000)
best = None
for _ in range(5):
    t0 = time.perf_counter_ns()
    loop(iters)
    dt = (time.perf_counter_ns() - t0) / (iters * OPS)
    best = dt if best is None else min(best, dt)
print("RESULT " + json.dumps({"ns_per_op": best}))
"""


def measure(cmd, env):
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
    line = next(l for l in out.splitlines() if l.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])["ns_per_op"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--memlife", default=str(REPO / "build-torch" / "bin" / "memlife"))
    parser.add_argument("--iters", type=int, default=20000)
    parser.add_argument("--baseline-memlife", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        script = pathlib.Path(tmp) / "loop.py"
        script.write_text(LOOP)
        py = [sys.executable, str(script), str(args.iters)]
        env = dict(os.environ)
        env.pop("MEMLIFE_TORCH_FLOOR", None)

        def under(stacks, extra_env=None, memlife=None):
            e = dict(env, **(extra_env or {}))
            return [memlife or args.memlife, "run", "-o", str(pathlib.Path(tmp) / f"t-{stacks}-{len(e)}"),
                    "--stacks", stacks, "--", *py], e

        results = {"plain": measure(py, env)}
        cmd, e = under("none", {"MEMLIFE_TORCH_FLOOR": "1"})
        results["floor"] = measure(cmd, e)
        results["memlife_stacks_none"] = measure(*under("none"))
        results["memlife_stacks_python"] = measure(*under("python"))
        if args.baseline_memlife:
            results["baseline_stacks_none"] = measure(*under("none", {"B": "1"}, args.baseline_memlife))
            results["baseline_stacks_python"] = measure(*under("python", {"B": "1"}, args.baseline_memlife))
    plain, floor = results["plain"], results["floor"]
    for name, ns in results.items():
        print(f"{name:24s} {ns:8.0f} ns/op   {ns / plain:5.2f}x plain   {ns / floor:5.2f}x floor")
    print("goal: stacks none <= 1.3x plain, stacks python <= 1.5x plain (or report distance from floor)")


if __name__ == "__main__":
    main()
