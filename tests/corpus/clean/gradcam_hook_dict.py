"""Grad-CAM while training (a torchvision ResNet-18): a forward hook and a
tensor hook store the last conv block's activation and its gradient in a
dict, overwritten at every step, and a heatmap is computed from them every
few steps."""
import os

import torch
import torch.nn as nn
import torchvision

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def main():
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=5).to(DEVICE)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    captured = {}

    def keep_activation(module, inputs, output):
        captured["activation"] = output.detach()
        output.register_hook(lambda grad: captured.__setitem__("gradient", grad.detach()))

    model.layer4.register_forward_hook(keep_activation)
    heat = None
    for step in range(8):
        x, y = torch.randn(4, 3, 64, 64, device=DEVICE), torch.randint(0, 5, (4,), device=DEVICE)
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 3 == 0:
            weights = captured["gradient"].mean(dim=(2, 3), keepdim=True)
            heat = torch.relu((weights * captured["activation"]).sum(dim=1)).cpu()
        print(step, round(loss.item(), 4))
    print("heatmap", tuple(heat.shape))


if __name__ == "__main__":
    main()
