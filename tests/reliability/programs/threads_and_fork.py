"""Threads doing tensor work while the main thread forks children that use torch."""
import os
import threading

import torch

# Each thread's first op initialises torch's per-thread RecordFunction state
# under a process-wide lock; a fork at that instant deadlocks the child in
# torch itself, with or without memlife. Fork only once every thread is past
# its first op.
started = threading.Barrier(5)


def work(n):
    # No random numbers either: torch's default generator lock has the same
    # fork hazard.
    torch.ones(1).sum()
    started.wait()
    for _ in range(n):
        a = torch.ones(64, 64) * 3
        b = a[:, :32].sum()
        del a, b


threads = [threading.Thread(target=work, args=(300,)) for _ in range(4)]
for t in threads:
    t.start()
started.wait()
children = []
for _ in range(3):
    pid = os.fork()
    if pid == 0:
        work.__globals__["started"] = threading.Barrier(1)
        work(50)
        os._exit(0)
    children.append(pid)
for pid in children:
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
for t in threads:
    t.join()
print("done")
