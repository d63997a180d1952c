#!/usr/bin/env python3
"""Peak RSS of a traced program over the same program plain (issue 15).

Runs, interleaved over several rounds in one invocation, a tensor-churning
loop and a tiny random-init HF BERT training loop, each plain and under
`memlife run`, and prints the medians and the goal
traced <= 1.10 x plain + 64 MB. Not part of the test suite (RSS is noisy).

    python3 bench/rss/rss_bench.py [--rounds 3] [--memlife build/bin/memlife]
        [--churn-iters 300] [--bert-iters 10] [--only churn|bert]
Extra environment for the traced runs: --env NAME=VALUE (repeatable).
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def workload_value(cmd, env, key):
    """Runs a workload.py command and returns the number on its `key` line
    (peak_rss_kib, work_seconds); exits with its output when there is none."""
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    for line in out.stdout.splitlines():
        if line.startswith(key + " "):
            return float(line.split()[1])
    sys.stderr.write(out.stdout[-2000:] + out.stderr[-4000:])
    raise SystemExit(f"no {key} from {cmd}")


def run(cmd, env):
    return workload_value(cmd, env, "peak_rss_kib") / 1024.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--memlife", default=os.path.join(ROOT, "build", "bin", "memlife"))
    ap.add_argument("--churn-iters", type=int, default=300)
    ap.add_argument("--bert-iters", type=int, default=10)
    ap.add_argument("--only", choices=["churn", "bert"])
    ap.add_argument("--env", action="append", default=[])
    a = ap.parse_args()

    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "1")
    env["TRANSFORMERS_OFFLINE"] = "1"
    env["HF_HUB_OFFLINE"] = "1"
    traced_env = dict(env)
    for kv in a.env:
        k, _, v = kv.partition("=")
        traced_env[k] = v
    workload = os.path.join(HERE, "workload.py")
    kinds = [a.only] if a.only else ["churn", "bert"]
    iters = {"churn": a.churn_iters, "bert": a.bert_iters}
    results = {k: {"plain": [], "traced": []} for k in kinds}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(a.rounds):
            for k in kinds:
                prog = [sys.executable, workload, k, str(iters[k])]
                plain = run(prog, env)
                out = os.path.join(tmp, f"{k}-{r}")
                traced = run([a.memlife, "run", "-o", out, "--"] + prog, traced_env)
                results[k]["plain"].append(plain)
                results[k]["traced"].append(traced)
                print(f"round {r} {k}: plain {plain:.0f} MB traced {traced:.0f} MB", flush=True)
    ok = True
    for k in kinds:
        p = statistics.median(results[k]["plain"])
        t = statistics.median(results[k]["traced"])
        goal = 1.10 * p + 64
        met = t <= goal
        ok &= met
        print(
            f"{k}: median peak RSS plain {p:.0f} MB, traced {t:.0f} MB, "
            f"ratio {t / p:.2f}x, goal <= {goal:.0f} MB: {'met' if met else 'NOT met'}"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
