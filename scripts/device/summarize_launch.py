#!/usr/bin/env python3
"""Per mode of the launch-bound loop (launch_overhead.jsonl from
launch_rounds in common.sh): median over processes of each process's median
us/iter, the lowest repetition seen, and the ratio to plain."""
import json
import statistics
import sys

rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
modes = {}
for r in rows:
    modes.setdefault(r["mode"], []).append(r)
plain = statistics.median(r["us_per_iter"] for r in modes["launch"])
for mode, rs in modes.items():
    med = statistics.median(r["us_per_iter"] for r in rs)
    best = min(r.get("min_us_per_iter", r["us_per_iter"]) for r in rs)
    print(f"{mode:34s} median {med:7.1f} us  min {best:7.1f} us  {med / plain:5.2f}x plain  (n={len(rs)})")
