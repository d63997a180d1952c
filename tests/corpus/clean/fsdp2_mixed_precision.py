# memlife-corpus: torchrun
"""FSDP2 with a mixed-precision policy (bf16 parameters for compute, fp32
gradient reduction), the root kept unsharded after forward, explicit
forward prefetching between blocks, and a full state dict gathered on rank 0
at the end (torch.distributed.checkpoint.state_dict)."""
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

from _device import init_distributed


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(64)
        self.ff = nn.Sequential(nn.Linear(64, 128), nn.GELU(), nn.Linear(128, 64))

    def forward(self, x):
        return x + self.ff(self.norm(x))


def main():
    device = init_distributed()
    torch.manual_seed(0)
    model = nn.Sequential(*[Block() for _ in range(3)], nn.Linear(64, 8)).to(device)
    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    blocks = [model[i] for i in range(3)]
    for block in blocks:
        fully_shard(block, mp_policy=policy)
    fully_shard(model, mp_policy=policy, reshard_after_forward=False)
    for a, b in zip(blocks, blocks[1:]):
        a.set_modules_to_forward_prefetch([b])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for step in range(8):
        x = torch.randn(8, 16, 64, device=device)
        y = torch.randint(0, 8, (8 * 16,), device=device)
        loss = nn.functional.cross_entropy(model(x).float().reshape(-1, 8), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        print(dist.get_rank(), step, round(loss.item(), 4))
    full = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
    if dist.get_rank() == 0:
        print("state", sum(t.numel() for t in full.values()))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
