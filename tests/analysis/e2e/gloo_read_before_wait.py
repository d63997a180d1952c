# One gloo rank: a functional all_gather, then its output read by a real op
# before wait_tensor ("early": use_before_wait), or only after ("after": none).
import os
import sys
import tempfile

import torch
import torch.distributed as dist

mode = sys.argv[1]
store = os.path.join(tempfile.mkdtemp(), "store")
dist.init_process_group("gloo", init_method=f"file://{store}", rank=0, world_size=1)
group = dist.group.WORLD.group_name
funcol = torch.ops._c10d_functional
x = torch.ones(1 << 16)
for _ in range(2):
    out = funcol.all_gather_into_tensor(x, 1, group)  # ISSUE_LINE
    as_int = out.view(torch.int32)  # a view reads no data
    if mode == "early":
        total = (out * 2).sum()  # READ_LINE
    waited = funcol.wait_tensor(as_int)
    total = (waited.view(torch.float32) * 2).sum()
    del out, as_int, waited
dist.destroy_process_group()
print("total", float(total))
