"""Weight-only int8 quantization as torchao builds it: a wrapper tensor
subclass (_make_wrapper_subclass, __torch_dispatch__) holding int8 data and
per-channel scales, swapped into a model's Linear layers as frozen
parameters; then QLoRA-style low-rank adapters trained on top of the frozen
int8 base, and a few batches served."""
import torch
import torch.nn as nn
from torch.utils._pytree import tree_map
from _device import DEVICE  # cuda on the GPU half


class Int8Weight(torch.Tensor):
    @staticmethod
    def __new__(cls, qdata, scale):
        return torch.Tensor._make_wrapper_subclass(cls, qdata.shape, dtype=scale.dtype, device=qdata.device,
                                                   requires_grad=False)

    def __init__(self, qdata, scale):
        self.qdata = qdata
        self.scale = scale

    def __tensor_flatten__(self):
        return ["qdata", "scale"], None

    @staticmethod
    def __tensor_unflatten__(inner, meta, outer_size, outer_stride):
        return Int8Weight(inner["qdata"], inner["scale"])

    @classmethod
    def quantize(cls, w):
        scale = w.abs().amax(dim=1, keepdim=True).clamp_min(1e-8) / 127
        return cls(torch.round(w / scale).to(torch.int8), scale)

    def dequantize(self):
        return self.qdata.to(self.scale.dtype) * self.scale

    def __repr__(self):
        return f"Int8Weight(shape={tuple(self.shape)})"

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        if func is torch.ops.aten.detach.default:
            return Int8Weight(args[0].qdata, args[0].scale)
        unwrap = lambda x: x.dequantize() if isinstance(x, Int8Weight) else x  # noqa: E731
        return func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs or {}))


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, rank=8):
        super().__init__()
        self.base = base
        self.down = nn.Linear(base.in_features, rank, bias=False, device=base.weight.device)
        self.up = nn.Linear(rank, base.out_features, bias=False, device=base.weight.device)
        nn.init.zeros_(self.up.weight)

    def forward(self, x):
        return self.base(x) + self.up(self.down(x))


def quantize_(model):
    for name, child in model.named_children():
        if isinstance(child, nn.Linear):
            child.weight = nn.Parameter(Int8Weight.quantize(child.weight.detach()), requires_grad=False)
            child.bias.requires_grad_(False)
            setattr(model, name, LoRALinear(child))
        else:
            quantize_(child)


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(128, 512), nn.GELU(), nn.Linear(512, 512), nn.GELU(), nn.Linear(512, 10)).to(DEVICE)
    x = torch.randn(8, 128, device=DEVICE)
    before = model(x).detach()
    quantize_(model)
    print("max error after quantization", round((model(x) - before).abs().max().item(), 4))
    adapters = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(adapters, lr=1e-3)
    for step in range(15):
        x, y = torch.randn(32, 128, device=DEVICE), torch.randint(0, 10, (32,), device=DEVICE)
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    with torch.inference_mode():
        preds = [model(torch.randn(16, 128, device=DEVICE)).argmax(-1) for _ in range(4)]
    print("adapter params", sum(p.numel() for p in adapters), "loss", round(loss.item(), 3), len(preds))


if __name__ == "__main__":
    main()
