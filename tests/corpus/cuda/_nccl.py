"""The process group of a GPU-only corpus program: NCCL, one GPU per rank."""
import os

import torch
import torch.distributed as dist


def init_nccl():
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
    torch.cuda.set_device(device)
    dist.init_process_group(backend="nccl", device_id=device)
    return device
