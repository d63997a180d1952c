"""Semantic segmentation with torchvision: DeepLabV3 on a MobileNetV3
backbone (random init, no download) with its auxiliary head, trained a few
steps on synthetic masks with the main and auxiliary losses and an
ignore_index, then evaluated with a confusion-matrix mIoU."""
import os

import torch
import torch.nn as nn
from torchvision.models.segmentation import deeplabv3_mobilenet_v3_large

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half

CLASSES = 4


def batch(g, size=4, hw=96):
    images = torch.rand(size, 3, hw, hw, generator=g)
    masks = (images[:, 0] * CLASSES).long().clamp(max=CLASSES - 1)
    masks[:, :4] = 255  # unlabelled border
    return images.to(DEVICE), masks.to(DEVICE)


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    model = deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=CLASSES, aux_loss=True).to(DEVICE)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    criterion = nn.CrossEntropyLoss(ignore_index=255)
    model.train()
    for step in range(6):
        images, masks = batch(g)
        out = model(images)
        loss = criterion(out["out"], masks) + 0.5 * criterion(out["aux"], masks)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    confusion = torch.zeros(CLASSES, CLASSES, dtype=torch.long, device=DEVICE)
    with torch.inference_mode():
        for _ in range(2):
            images, masks = batch(g)
            pred = model(images)["out"].argmax(1)
            keep = masks != 255
            confusion += torch.bincount(masks[keep] * CLASSES + pred[keep], minlength=CLASSES ** 2).view(CLASSES, CLASSES)
    iou = confusion.diag() / (confusion.sum(0) + confusion.sum(1) - confusion.diag()).clamp_min(1)
    print("loss", round(loss.item(), 3), "mIoU", round(iou.mean().item(), 3))


if __name__ == "__main__":
    main()
