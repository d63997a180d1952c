"""Inference the TorchScript way: torch.jit.trace of a small CNN in eval
mode, torch.jit.freeze (folds the parameters into constants), saved and
loaded back with torch.jit.load, then batches served from the loaded module
and from an optimize_for_inference copy. (A module optimize_for_inference
made does not load back in torch 2.15: "required keyword attribute 'value'
is undefined".)"""
import io

import torch
import torch.nn as nn
from _device import DEVICE  # cuda on the GPU half


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10)).to(DEVICE).eval()
    example = torch.randn(1, 3, 32, 32, device=DEVICE)
    with torch.no_grad():
        traced = torch.jit.trace(model, example)
        frozen = torch.jit.freeze(traced)
        optimized = torch.jit.optimize_for_inference(torch.jit.freeze(traced))
    buffer = io.BytesIO()
    torch.jit.save(frozen, buffer)
    buffer.seek(0)
    served = torch.jit.load(buffer)
    del model, traced, frozen
    with torch.inference_mode():
        for step in range(8):
            x = torch.randn(4, 3, 32, 32, device=DEVICE)
            out = served(x)
            print(step, out.argmax(1).tolist(), torch.allclose(out, optimized(x), atol=1e-4))
    # Tracing and freezing leave the graphs' constants in TorchScript's
    # global compilation unit after the modules are gone (pytorch/pytorch
    # #96726, #43119); PyTorch's own tests clear it this way (#78566).
    del served, optimized
    torch.jit._state._python_cu.drop_all_functions()


if __name__ == "__main__":
    main()
