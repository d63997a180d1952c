# One gloo rank: async all_reduces whose futures the program takes
# (work.get_future()) and waits through them: torch.futures.wait_all
# ("wait_all"), a then() callback that reads the result ("then"), or reads
# the output before fut.wait() ("early": use_before_wait), or never waits
# ("never": unwaited_collective).
import os
import sys
import tempfile

import torch
import torch.distributed as dist

mode = sys.argv[1]
store = os.path.join(tempfile.mkdtemp(), "store")
dist.init_process_group("gloo", init_method=f"file://{store}", rank=0, world_size=1)
kept = []
for step in range(3):
    grads = [torch.ones(1 << 14), torch.ones(1 << 12)]
    futures = [dist.all_reduce(g, async_op=True).get_future() for g in grads]  # ISSUE_LINE
    if mode == "wait_all":
        torch.futures.wait_all(futures)
    elif mode == "then":
        halved = [f.then(lambda f: f.value()[0].div_(2)) for f in futures]
        for f in halved:
            f.wait()
    elif mode == "early":
        total = grads[0].sum()  # READ_LINE
        for f in futures:
            f.wait()
    else:
        kept.append(futures)
    total = sum(float(g.sum()) for g in grads) if mode != "never" else 0.0
dist.destroy_process_group()
print("total", total)
