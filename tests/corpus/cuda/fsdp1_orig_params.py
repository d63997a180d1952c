# memlife-corpus: torchrun
"""GPU only (FSDP1 needs an accelerator). FSDP (the FlatParameter
FullyShardedDataParallel) with use_orig_params, an auto-wrap policy per
block and a full state dict gathered to rank 0 for a checkpoint at the
end, as FSDP1 recipes still do."""
import io

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.fsdp import FullStateDictConfig, StateDictType
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp.wrap import ModuleWrapPolicy

from _nccl import init_nccl


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        return x + self.ff(self.norm(x))


def main():
    device = init_nccl()
    torch.manual_seed(0)
    d = 32
    model = nn.Sequential(*[Block(d) for _ in range(3)], nn.Linear(d, 5))
    fsdp = FSDP(model, auto_wrap_policy=ModuleWrapPolicy({Block}), use_orig_params=True,
                device_id=device)
    opt = torch.optim.AdamW(fsdp.parameters(), lr=1e-3)
    for step in range(6):
        x = torch.randn(8, 16, d, device=device)
        y = torch.randint(0, 5, (8 * 16,), device=device)
        loss = nn.functional.cross_entropy(fsdp(x).reshape(-1, 5), y)
        loss.backward()
        fsdp.clip_grad_norm_(1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
    cfg = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)
    with FSDP.state_dict_type(fsdp, StateDictType.FULL_STATE_DICT, cfg):
        state = fsdp.state_dict()
    if dist.get_rank() == 0:
        buf = io.BytesIO()
        torch.save(state, buf)
        print("checkpoint bytes", len(buf.getvalue()))
    del state
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
