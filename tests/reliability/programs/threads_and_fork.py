"""Threads doing tensor work while the main thread forks children that use torch."""
import os
import threading

import torch


def work(n):
    for _ in range(n):
        a = torch.randn(64, 64)
        b = a[:, :32].sum()
        del a, b


threads = [threading.Thread(target=work, args=(300,)) for _ in range(4)]
for t in threads:
    t.start()
children = []
for _ in range(3):
    pid = os.fork()
    if pid == 0:
        work(50)
        os._exit(0)
    children.append(pid)
for pid in children:
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
for t in threads:
    t.join()
print("done")
