"""How much a SIGKILL loses: runs a tensor-allocating loop under `memlife run`
that SIGKILLs itself after SECONDS, and prints the time between the last
record in its trace and the kill (issue 15, README "What memlife
guarantees").

  python3 bench/sigkill_loss.py MEMLIFE [RUNS]      # the driver
"""
import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import time


def child(stamp, seconds):
    import torch
    keep = []
    t0 = time.monotonic()
    i = 0
    while time.monotonic() - t0 < seconds:
        keep.append(torch.empty(1000 + (i % 100)))
        if len(keep) > 50:
            keep.pop(0)
        i += 1
    t = time.monotonic_ns()  # the clock the recorder stamps records with
    with open(stamp, "w") as f:
        f.write(str(t))
    os.kill(os.getpid(), signal.SIGKILL)


def driver(memlife, runs):
    for n in range(runs):
        seconds = 0.5 + 0.27 * n
        with tempfile.TemporaryDirectory() as tmp:
            stamp = os.path.join(tmp, "stamp")
            out = os.path.join(tmp, "traces")
            subprocess.run([memlife, "run", "-o", out, "--", sys.executable, __file__, "--child",
                            stamp, str(seconds)], stderr=subprocess.DEVNULL)
            killed_at = int(open(stamp).read())
            trace = glob.glob(os.path.join(out, "*.mltrace"))[0]
            dump = subprocess.run([memlife, "dump", "--format", "jsonl", trace],
                                  capture_output=True, text=True).stdout
            records = [json.loads(line) for line in dump.splitlines() if line.strip()]
            last = max(r.get("time_ns", 0) for r in records)
            allocs = sum(r.get("type") == "alloc" for r in records)
            print("run %d: last record %.1f ms before SIGKILL (%d allocations recorded)"
                  % (n, (killed_at - last) / 1e6, allocs))


if __name__ == "__main__":
    if sys.argv[1] == "--child":
        child(sys.argv[2], float(sys.argv[3]))
    else:
        driver(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 8)
