# Seed 000 on the GPU: a padded gather buffer registered in a registry, a
# true-shape view returned to the caller, then released either by
# set_data(empty) (the bug: the view keeps the padded storage alive) or by
# resizing the storage to 0 bytes (the fix).
import sys
import torch

mode = sys.argv[1]
registry = {}


def gather(numel, padded):
    buf = torch.empty(padded, device="cuda", dtype=torch.bfloat16)
    registry["p"] = buf
    return buf.narrow(0, 0, numel).view(numel // 1024, 1024)


def release():
    buf = registry["p"]
    if mode == "set_data":
        buf.data = torch.empty(0, device="cuda", dtype=buf.dtype)
    else:
        buf.untyped_storage().resize_(0)
    del registry["p"]


view = gather(6_291_456, 6_297_600)  # 12,595,200 bytes padded
release()
try:
    import ctypes
    ctypes.CDLL(None).memlife_census()
except Exception:
    pass
print("allocated_after_release", torch.cuda.memory_allocated(), flush=True)
del view
print("allocated_after_view_dropped", torch.cuda.memory_allocated(), flush=True)
