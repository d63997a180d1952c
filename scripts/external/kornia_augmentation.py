"""kornia GPU-style batch augmentation inside a training loop (kornia tutorials: 'data augmentation
in the training loop' DataAugmentation module; AugmentationSequential with image+mask for segmentation).
usage: kornia_augmentation.py MODE [steps]   MODE in cls,seg"""
import sys, torch
from torch import nn
import torch.nn.functional as F
import kornia.augmentation as K

class DataAugmentation(nn.Module):
    """as in kornia's Lightning tutorial"""
    def __init__(self, apply_color_jitter=True):
        super().__init__()
        self._apply_color_jitter = apply_color_jitter
        self.transforms = nn.Sequential(
            K.RandomHorizontalFlip(p=0.75),
            K.RandomChannelShuffle(p=0.75),
            K.RandomThinPlateSpline(p=0.75),
            K.RandomAffine(degrees=15, translate=(0.1, 0.1), p=0.5),
        )
        self.jitter = K.ColorJitter(0.5, 0.5, 0.5, 0.5)
    @torch.no_grad()
    def forward(self, x):
        x_out = self.transforms(x)
        if self._apply_color_jitter:
            x_out = self.jitter(x_out)
        return x_out

def main():
    mode = sys.argv[1]
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    torch.manual_seed(0)
    imgs = torch.rand(512, 3, 64, 64)
    labels = torch.randint(0, 10, (512,))
    masks = (torch.rand(512, 1, 64, 64) > 0.5).float()
    ds = torch.utils.data.TensorDataset(imgs, labels, masks)
    dl = torch.utils.data.DataLoader(ds, batch_size=16, shuffle=True, drop_last=True)
    if mode == 'cls':
        aug = DataAugmentation()
        model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                              nn.Flatten(), nn.Linear(32, 10))
    else:
        aug = K.AugmentationSequential(
            K.RandomHorizontalFlip(p=0.5),
            K.RandomAffine(degrees=20, scale=(0.8, 1.2), p=0.7),
            K.RandomResizedCrop((64, 64), scale=(0.6, 1.0)),
            K.ColorJiggle(0.2, 0.2, 0.2, 0.0, p=0.5),
            data_keys=["input", "mask"],
        )
        model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(),
                              nn.Conv2d(16, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 1, 1))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    step = 0
    while step < steps:
        for x, y, m in dl:
            if mode == 'cls':
                x = aug(x)
                loss = F.cross_entropy(model(x), y)
            else:
                x, m = aug(x, m)
                loss = F.binary_cross_entropy_with_logits(model(x), m)
            loss.backward(); opt.step(); opt.zero_grad()
            if step % 20 == 0:
                print(f'step {step} loss {loss.item():.4f}')
            step += 1
            if step >= steps:
                break

if __name__ == '__main__':
    main()
