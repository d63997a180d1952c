"""The device a corpus program runs on, and its process group."""
import os

import torch
import torch.distributed as dist

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def init_distributed():
    """gloo on CPU, NCCL on one GPU per rank; the rank's device."""
    if DEVICE.type == "cuda":
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
        torch.cuda.set_device(device)
        dist.init_process_group(backend="nccl", device_id=device)
        return device
    dist.init_process_group(backend="gloo")
    return DEVICE
