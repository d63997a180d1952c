#!/usr/bin/env python3
"""Time cost of the holder walk (python/memlife/_holders.py), which names the
Python references to tensor memory after optimizer steps 1, 2, 3, 4, 6, 8, ...

In one process training a small HF GPT-2 (transformers imported: some
thousand modules), it times, interleaved over several rounds, one training
step, one walk as it runs in `memlife run` (its realpath cache warm after
the first walk), and one walk with that cache emptied first (every module,
class and frame path resolved again, as each walk did before the cache),
and prints the medians and the ratios walk/step. Not part of the test
suite (timings are noisy).

    python3 bench/recorder/holder_walk_cost.py [--rounds 7]
"""

import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()

    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    from memlife import _holders

    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=64, n_head=2, vocab_size=1000))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def step():
        ids = torch.randint(0, 1000, (4, 32))
        opt.zero_grad()
        model(ids, labels=ids).loss.backward()
        opt.step()

    def walk():
        _holders.walk(torch, lambda ptr, path: None)

    def cold_walk():
        _holders._realpath.cache_clear()
        walk()

    step()
    walk()  # warms the cache, as the first walk of a run does
    timings = {"step": [], "walk": [], "walk, cache emptied": []}
    for _ in range(args.rounds):
        for name, fn in (("step", step), ("walk", walk), ("walk, cache emptied", cold_walk)):
            start = time.perf_counter()
            fn()
            timings[name].append(time.perf_counter() - start)
    median = {name: statistics.median(ts) for name, ts in timings.items()}
    for name, value in median.items():
        print(f"{name:>20}: {value * 1000:8.1f} ms (median of {args.rounds})")
    print(f"walk / step: {median['walk'] / median['step']:.2f}; "
          f"emptied-cache walk / step: {median['walk, cache emptied'] / median['step']:.2f}; "
          f"emptied / warm: {median['walk, cache emptied'] / median['walk']:.1f}x")


if __name__ == "__main__":
    main()
