#!/usr/bin/env python3
"""Time cost of the torch plugin's death sweeper (issue 13 item 3).

Runs bench/rss/workload.py's workloads under `memlife run` with the sweeper
at its default interval (MEMLIFE_SWEEP_MS=50) and off (0), interleaved over
several rounds in one invocation, and prints the median work seconds of each
and their ratio (the sweeper's cost; 1.00 = none). The workloads: `views`
(a window of 64 views whose bases were dropped: the sweep takes the GIL and
checks each, every sweep), `churn` (many short-lived tensors and views) and
`bert` (a tiny HF BERT training loop). Plain runs (no memlife) are printed
for reference. Not part of the test suite (timings are noisy).

    python3 bench/recorder/sweep_cost.py [--rounds 5] [--memlife build/bin/memlife]
"""

import argparse
import os
import statistics
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORKLOAD = os.path.join(ROOT, "bench", "rss", "workload.py")
sys.path.insert(0, os.path.join(ROOT, "bench", "rss"))
from rss_bench import workload_value  # noqa: E402


def work_seconds(cmd, env):
    return workload_value(cmd, env, "work_seconds")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--memlife", default=os.path.join(ROOT, "build", "bin", "memlife"))
    ap.add_argument("--workloads", default="views,churn,bert")
    args = ap.parse_args()
    workloads = {"views": "20000", "churn": "300", "bert": "10"}
    chosen = args.workloads.split(",")
    times = {(w, mode): [] for w in chosen for mode in ("plain", "sweep-50", "sweep-0")}
    with tempfile.TemporaryDirectory(prefix="memlife-sweep-") as tmp:
        for r in range(args.rounds):
            for w in chosen:
                base = [sys.executable, WORKLOAD, w, workloads[w]]
                times[(w, "plain")].append(work_seconds(base, dict(os.environ)))
                for ms in ("50", "0"):
                    env = dict(os.environ, MEMLIFE_SWEEP_MS=ms)
                    cmd = [args.memlife, "run", "-o", os.path.join(tmp, f"{w}-{ms}-{r}"), "--"] + base
                    times[(w, f"sweep-{ms}")].append(work_seconds(cmd, env))
    print(f"median work seconds over {args.rounds} interleaved rounds")
    print(f"{'workload':10} {'plain':>9} {'sweep 50 ms':>12} {'no sweeper':>11} {'sweep/none':>11}")
    for w in chosen:
        med = {m: statistics.median(times[(w, m)]) for m in ("plain", "sweep-50", "sweep-0")}
        print(f"{w:10} {med['plain']:9.3f} {med['sweep-50']:12.3f} {med['sweep-0']:11.3f} "
              f"{med['sweep-50'] / med['sweep-0']:11.3f}")


if __name__ == "__main__":
    main()
