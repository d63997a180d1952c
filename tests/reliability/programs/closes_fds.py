"""Closes every descriptor it did not open (as daemons and some launchers
do), then opens its own file and writes to it while torch keeps allocating.
Prints the path it wrote. Issue 15 item 1."""
import os
import sys

import torch

out = sys.argv[1]
keep = [torch.ones(1000 + i) for i in range(50)]
os.closerange(3, 65536)
with open(out, "wb") as f:
    for i in range(200):
        # Allocations keep the recorder's writer busy while the file is open.
        keep.append(torch.ones(4096 + i))
        f.write(b"mine %d\n" % i)
        f.flush()
        if i % 50 == 0:
            import time
            time.sleep(0.06)  # past the writer's flush interval
del keep
print("done")
