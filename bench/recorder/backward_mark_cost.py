#!/usr/bin/env python3
"""Time cost of the marks memlife's Python hooks put around each backward
pass (MEMLIFE_BACKWARD_BEGIN/END, with the caller's stack) and of the probe
that gives a loop without an optimizer its steps (this loop has none), in one process
under `memlife run`: interleaved rounds of a tiny backward (a 4x16 @ 16x16
matmul) with the wrapper in place and with it swapped out, the medians of
the per-backward times and their difference. A real model's backward takes
milliseconds; this one about 0.1 ms, so the difference is the wrapper's own
cost. Not part of the test suite (timings are noisy).

    OMP_NUM_THREADS=1 memlife run -o /tmp/t -- python3 bench/recorder/backward_mark_cost.py
"""

import argparse
import statistics
import time

import torch
import torch.autograd
import torch.autograd.graph


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    wrapped = torch.autograd.graph._engine_run_backward
    plain = getattr(wrapped, "__wrapped__", None)
    if plain is None:
        raise SystemExit("backward is not wrapped: run this under `memlife run`")
    w = torch.randn(16, 16, requires_grad=True)
    x = torch.randn(4, 16)

    def per_call_us(run):
        torch.autograd.graph._engine_run_backward = torch.autograd._engine_run_backward = run
        start = time.perf_counter()
        for _ in range(args.calls):
            (x @ w).sum().backward()
        return (time.perf_counter() - start) / args.calls * 1e6

    per_call_us(wrapped)  # warm-up
    times = {"marked": [], "unmarked": []}
    for _ in range(args.rounds):
        times["marked"].append(per_call_us(wrapped))
        times["unmarked"].append(per_call_us(plain))
    marked, unmarked = (statistics.median(times[k]) for k in ("marked", "unmarked"))
    print(f"per backward, median of {args.rounds} interleaved rounds: marked {marked:.1f} us, "
          f"unmarked {unmarked:.1f} us, the marks {marked - unmarked:.1f} us")


if __name__ == "__main__":
    main()
