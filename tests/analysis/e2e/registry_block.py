# Issue 13 item 4 (C++ holders) through memlife.record(): the registry of
# ops/gathered_registry.cc (DeepCompile's ZeRO-3 gather, in C++) keeps the
# padded buffer it gathered when the block never releases it ("keep"); the
# program drops the view it got back, so no Python reference reaches the
# memory. "release" frees it inside the block. Prints the block's findings
# as JSON.
import json
import sys

import torch

import memlife

PADDED_NUMEL = 310_000  # floats: 1,240,000 bytes

torch.ops.load_library(sys.argv[1])
shard = torch.ones(300, 1000)
with memlife.record() as rec:
    view = torch.ops.memlife_test.gather(shard, 7, PADDED_NUMEL)  # GATHER_LINE
    del view
    if sys.argv[2] == "release":
        torch.ops.memlife_test.release(7, True)
print(json.dumps({"findings": rec.findings, "warnings": rec.report["warnings"]}))
