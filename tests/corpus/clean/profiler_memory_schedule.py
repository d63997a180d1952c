"""A training loop profiled the way the PyTorch tutorials do it:
torch.profiler with a wait/warmup/active schedule, profile_memory,
record_shapes and with_stack, a trace handler writing a Chrome trace each
cycle, then the key averages table."""
import os
import tempfile

import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 512), nn.GELU(), nn.Linear(512, 256)).to(DEVICE)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if DEVICE.type == "cuda" else [])
    with tempfile.TemporaryDirectory() as logdir:
        with profile(activities=activities, schedule=schedule(wait=1, warmup=1, active=2, repeat=2),
                     on_trace_ready=tensorboard_trace_handler(logdir), profile_memory=True,
                     record_shapes=True, with_stack=True) as prof:
            for step in range(10):
                x = torch.randn(64, 256, device=DEVICE)
                loss = (model(x) - x).pow(2).mean()
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                prof.step()
        print(prof.key_averages().table(sort_by="self_cpu_memory_usage", row_limit=5)[:400])
        print("traces", len(os.listdir(logdir)))
        # What the profile saw of the last cycle: memlife must not change it
        # (scripts/device/observer_effect.sh compares these lines with and
        # without memlife; on the GPU, memlife's CUPTI client beside Kineto's).
        events = prof.events()
        on_gpu = sum(1 for e in events if e.device_type == torch.autograd.DeviceType.CUDA)
        print("OBSERVED profile events", len(events), "on the GPU", on_gpu)


if __name__ == "__main__":
    main()
