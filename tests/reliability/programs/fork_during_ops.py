"""Threads run torch ops without pause while the main thread forks children
that each run one op: a fork must never find a lock taken that the child
then waits on for good. Prints how many children did not finish in time."""
import os
import sys
import threading
import time

import torch

FORKS = int(sys.argv[1])
THREADS = 4
CHILD_DEADLINE_S = 20

stop = threading.Event()
# Each thread's first op builds torch's per-thread RecordFunction state under
# a process-wide lock: a fork at that instant hangs the child in torch
# itself, with or without memlife. Fork only once every thread is past it.
started = threading.Barrier(THREADS + 1)


def work():
    x = torch.ones(16, 16)
    x.sum()
    started.wait()
    while not stop.is_set():
        # Ops that run several nested ops each: memlife switches torch's
        # RecordFunction off inside them once it has learned that.
        x[:, :8].sum()
        torch.nn.functional.linear(x, x, x[0])
        x.to(torch.float64)


threads = [threading.Thread(target=work) for _ in range(THREADS)]
for t in threads:
    t.start()
started.wait()
hung = 0
for _ in range(FORKS):
    pid = os.fork()
    if pid == 0:
        torch.ones(4).sum()
        os._exit(0)
    deadline = time.monotonic() + CHILD_DEADLINE_S
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            hung += 1
            break
        time.sleep(0.002)
stop.set()
for t in threads:
    t.join()
print(f"hung {hung} of {FORKS}")
