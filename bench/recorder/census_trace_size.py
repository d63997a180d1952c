#!/usr/bin/env python3
"""Trace bytes the step censuses cost, for a program that keeps its dataset
as tensors: the loop of pytorch/examples' DDP tutorial (ddp-tutorial-series:
2,048 pairs of small tensors in a list, Linear(20, 1), SGD, batch 32) on
the CPU, one process, a census at each optimizer step.

Records the same loop twice in one invocation, with the step censuses
(the default) and without them (MEMLIFE_CENSUS_AT_STEPS=0, the baseline),
and prints each trace's bytes and census_storage records and the ratio.
Before censuses listed only what changed (trace format 4), every census
wrote every storage: the "whole censuses" count, 2,048 x 2 records a step.

    python3 bench/recorder/census_trace_size.py [--memlife build/bin/memlife] [--epochs 4]
        [--pairs 2048]
With --pairs 65536 (131,072 tensors) a census takes over 5 ms, and the
plugin spaces step censuses to at most 1/20 of the run: the loop times show
it.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

PROGRAM = """
import sys
import time
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

data = [(torch.rand(20), torch.rand(1)) for _ in range(int(sys.argv[2]))]
model = torch.nn.Linear(20, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
start = time.monotonic()
for epoch in range(int(sys.argv[1])):
    for source, targets in DataLoader(data[:2048], batch_size=32):
        optimizer.zero_grad()
        F.cross_entropy(model(source), targets).backward()
        optimizer.step()
print("loop_s", time.monotonic() - start)
"""


def record(memlife, script, epochs, pairs, censuses):
    out = tempfile.mkdtemp(prefix="census-size-")
    env = dict(os.environ, MEMLIFE_CENSUS_AT_STEPS="1" if censuses else "0", OMP_NUM_THREADS="1")
    run = subprocess.run([memlife, "run", "-o", out, "--", sys.executable, script, str(epochs),
                          str(pairs)], check=True, env=env, capture_output=True, text=True)
    loop_s = float(next(line.split()[1] for line in run.stdout.splitlines() if line.startswith("loop_s")))
    (trace,) = [os.path.join(out, f) for f in os.listdir(out) if f.endswith(".mltrace")]
    dump = subprocess.run([memlife, "dump", "--format", "jsonl", trace], check=True,
                          capture_output=True, text=True)
    written = whole = 0
    listed = set()  # the storages of the census being read, changes applied
    for line in dump.stdout.splitlines():
        r = json.loads(line)
        if r.get("type") == "census" and r["phase"] == "begin":
            listed = set()
        elif r.get("type") == "census" and r["phase"] == "end":
            whole += len(listed)
        elif r.get("type") == "census_storage":
            written += 1
            (listed.add if r["holders"] else listed.discard)(r["storage_id"])
    return os.path.getsize(trace), written, whole, loop_s


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--memlife", default=os.path.join(ROOT, "build", "bin", "memlife"))
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--pairs", type=int, default=2048,
                    help="(input, target) pairs kept as tensors; the loop trains on the first 2,048")
    args = ap.parse_args()
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(PROGRAM)
    with_censuses = record(args.memlife, f.name, args.epochs, args.pairs, True)
    without = record(args.memlife, f.name, args.epochs, args.pairs, False)
    steps = args.epochs * 64
    print(f"{steps} steps, {2 * args.pairs:,} dataset tensors")
    print(f"with step censuses:    {with_censuses[0]:>11,} B, {with_censuses[1]:>9,} census_storage "
          f"records (whole censuses: {with_censuses[2]:,})")
    print(f"without (baseline):    {without[0]:>11,} B, {without[1]:>9,} census_storage records")
    print(f"ratio: {with_censuses[0] / without[0]:.2f}x the trace without step censuses")
    print(f"loop: {with_censuses[3]:.2f} s with step censuses, {without[3]:.2f} s without "
          f"({with_censuses[3] / without[3]:.2f}x)")


if __name__ == "__main__":
    main()
