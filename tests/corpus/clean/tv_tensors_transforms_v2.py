"""torchvision's transforms v2 on detection samples: images, BoundingBoxes
and Masks as tv_tensors (Tensor subclasses), RandomIoUCrop, horizontal flip,
resize and SanitizeBoundingBoxes in a Compose, collated and fed to a small
box regressor."""
import torch
import torch.nn as nn
from torchvision import tv_tensors
from torchvision.transforms import v2
from _device import DEVICE  # cuda on the GPU half


def sample(g):
    image = tv_tensors.Image(torch.randint(0, 256, (3, 96, 96), dtype=torch.uint8, generator=g))
    xy = torch.randint(0, 60, (3, 2), generator=g).float()
    boxes = tv_tensors.BoundingBoxes(torch.cat([xy, xy + 30], 1), format="XYXY", canvas_size=(96, 96))
    mask = tv_tensors.Mask(torch.zeros(3, 96, 96, dtype=torch.uint8))
    return image, {"boxes": boxes, "masks": mask, "labels": torch.tensor([1, 2, 3])}


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    transform = v2.Compose([v2.RandomPhotometricDistort(p=1.0), v2.RandomIoUCrop(),
                            v2.RandomHorizontalFlip(p=0.5), v2.Resize((64, 64)),
                            v2.SanitizeBoundingBoxes(), v2.ToDtype(torch.float32, scale=True)])
    model = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                          nn.Flatten(), nn.Linear(8, 4)).to(DEVICE)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(10):
        images, targets = [], []
        for _ in range(4):
            image, target = transform(*sample(g))
            images.append(image)
            targets.append(target["boxes"][:1] if len(target["boxes"]) else torch.zeros(1, 4))
        x = torch.stack([img.as_subclass(torch.Tensor) for img in images]).to(DEVICE)
        y = torch.cat([t.as_subclass(torch.Tensor) for t in targets]).to(DEVICE) / 64
        loss = nn.functional.smooth_l1_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(step, round(loss.item(), 4))


if __name__ == "__main__":
    main()
