# memlife-corpus: torchrun
"""DeepSpeed ZeRO stage 3 on 2 ranks (gloo on CPU, DeepSpeed's CPU
accelerator; NCCL on the GPU half): the model built partitioned under
deepspeed.zero.Init, its parameters gathered on demand by the engine's
hooks and released after use, gradients reduce-scattered, 2 micro-batches
of accumulation, clipping, DeepSpeed's AdamW on the fp32 partitions; a
GatheredParameters read of the head every few steps (as a logger would),
evaluation under no_grad, a checkpoint saved and loaded back."""
import os
import tempfile

import torch
import torch.nn as nn

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half
if DEVICE.type == "cpu":
    os.environ.setdefault("DS_ACCELERATOR", "cpu")  # DeepSpeed picks CUDA when it can

import deepspeed  # noqa: E402

CONFIG = {
    "train_micro_batch_size_per_gpu": 8,
    "gradient_accumulation_steps": 2,
    "gradient_clipping": 1.0,
    "zero_optimization": {"stage": 3, "stage3_param_persistence_threshold": 0},
    "optimizer": {"type": "AdamW", "params": {"lr": 1e-3, "weight_decay": 0.01, "torch_adam": True}},
}


class Net(nn.Module):
    def __init__(self, dim=256, classes=10):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Sequential(nn.Linear(dim, dim), nn.GELU()) for _ in range(4))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        for block in self.blocks:
            x = x + block(x)
        return self.head(self.norm(x))


def main():
    deepspeed.init_distributed(dist_backend="gloo" if DEVICE.type == "cpu" else "nccl")
    torch.manual_seed(0)
    with deepspeed.zero.Init(config_dict_or_path=CONFIG):
        model = Net()
    engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=CONFIG)
    rank = engine.global_rank
    g = torch.Generator().manual_seed(1 + rank)
    for step in range(16):
        x = torch.randn(8, 256, generator=g).to(engine.device)
        y = torch.randint(0, 10, (8,), generator=g).to(engine.device)
        loss = nn.functional.cross_entropy(engine(x), y)
        engine.backward(loss)
        engine.step()
        if engine.is_gradient_accumulation_boundary() and engine.global_steps % 3 == 0:
            with deepspeed.zero.GatheredParameters(engine.module.head.weight):
                head_norm = engine.module.head.weight.norm().item()
    engine.eval()
    with torch.no_grad():
        x = torch.randn(32, 256, generator=g).to(engine.device)
        accuracy = (engine(x).argmax(-1) == torch.randint(0, 10, (32,), generator=g).to(engine.device))
    engine.train()
    with tempfile.TemporaryDirectory() as tmp:
        # Every rank writes its own shard, into a directory rank 0 made.
        folder = [tmp]
        torch.distributed.broadcast_object_list(folder, src=0)
        engine.save_checkpoint(folder[0], tag="last")
        engine.load_checkpoint(folder[0], tag="last")
        torch.distributed.barrier()
    print("rank", rank, "loss", round(loss.item(), 4), "optimizer steps", engine.global_steps,
          "head norm", round(head_norm, 3), "eval acc", accuracy.float().mean().item())


if __name__ == "__main__":
    main()
