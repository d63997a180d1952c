"""torchvision Faster R-CNN (MobileNetV3 FPN backbone, random init, no
download) trained a few steps on random images and boxes, then evaluated:
lists of tensors, torchvision's C++ ops (roi_align, nms)."""
import os

import torch
from torchvision.models.detection import fasterrcnn_mobilenet_v3_large_320_fpn

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def batch(n):
    images = [torch.rand(3, 160, 160, device=DEVICE) for _ in range(n)]
    targets = []
    for _ in range(n):
        xy = torch.rand(3, 2, device=DEVICE) * 100
        wh = torch.rand(3, 2, device=DEVICE) * 50 + 8
        targets.append({"boxes": torch.cat([xy, xy + wh], 1), "labels": torch.randint(1, 5, (3,), device=DEVICE)})
    return images, targets


def main():
    torch.manual_seed(0)
    model = fasterrcnn_mobilenet_v3_large_320_fpn(weights=None, weights_backbone=None, num_classes=5,
                                                  min_size=160, max_size=160).to(DEVICE)
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.01, momentum=0.9)
    model.train()
    for step in range(4):
        images, targets = batch(2)
        losses = model(images, targets)
        loss = sum(losses.values())
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    kept = 0
    with torch.no_grad():
        for _ in range(2):
            images, _ = batch(2)
            detections = model(images)
            kept += sum(len(d["boxes"]) for d in detections)
    print("loss", float(loss), "detections", kept)


if __name__ == "__main__":
    main()
