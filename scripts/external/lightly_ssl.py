"""lightly docs examples (examples/pytorch/{simclr,moco,nnclr}.py) on generated images (torchvision FakeData).
usage: lightly_ssl.py METHOD [steps] [batch] [workers]   METHOD in simclr,moco,nnclr"""
import sys, copy, torch, torchvision
from torch import nn
from lightly.data import LightlyDataset
from lightly.loss import NTXentLoss
from lightly.models.modules import (SimCLRProjectionHead, MoCoProjectionHead,
    NNCLRProjectionHead, NNCLRPredictionHead, NNMemoryBankModule)
from lightly.models.utils import deactivate_requires_grad, update_momentum
from lightly.transforms.simclr_transform import SimCLRTransform
from lightly.transforms.moco_transform import MoCoV2Transform
from lightly.utils.scheduler import cosine_schedule

class SimCLR(nn.Module):
    def __init__(self, backbone):
        super().__init__(); self.backbone = backbone
        self.projection_head = SimCLRProjectionHead(512, 512, 128)
    def forward(self, x):
        return self.projection_head(self.backbone(x).flatten(start_dim=1))

class MoCo(nn.Module):
    def __init__(self, backbone):
        super().__init__()
        self.backbone = backbone
        self.projection_head = MoCoProjectionHead(512, 512, 128)
        self.backbone_momentum = copy.deepcopy(self.backbone)
        self.projection_head_momentum = copy.deepcopy(self.projection_head)
        deactivate_requires_grad(self.backbone_momentum)
        deactivate_requires_grad(self.projection_head_momentum)
    def forward(self, x):
        return self.projection_head(self.backbone(x).flatten(start_dim=1))
    def forward_momentum(self, x):
        key = self.backbone_momentum(x).flatten(start_dim=1)
        return self.projection_head_momentum(key).detach()

class NNCLR(nn.Module):
    def __init__(self, backbone):
        super().__init__(); self.backbone = backbone
        self.projection_head = NNCLRProjectionHead(512, 512, 128)
        self.prediction_head = NNCLRPredictionHead(128, 512, 128)
    def forward(self, x):
        y = self.backbone(x).flatten(start_dim=1)
        z = self.projection_head(y); p = self.prediction_head(z)
        return z.detach(), p

def main():
    method = sys.argv[1]
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    bs = int(sys.argv[3]) if len(sys.argv) > 3 else 32
    workers = int(sys.argv[4]) if len(sys.argv) > 4 else 2
    torch.manual_seed(0)
    resnet = torchvision.models.resnet18()
    backbone = nn.Sequential(*list(resnet.children())[:-1])
    if method == 'moco':
        transform = MoCoV2Transform(input_size=32)
    else:
        transform = SimCLRTransform(input_size=32)
    fake = torchvision.datasets.FakeData(size=steps * bs // 2, image_size=(3, 32, 32), num_classes=10)
    dataset = LightlyDataset.from_torch_dataset(fake, transform=transform)
    dl = torch.utils.data.DataLoader(dataset, batch_size=bs, shuffle=True, drop_last=True, num_workers=workers)
    epochs = 2
    if method == 'simclr':
        model = SimCLR(backbone); criterion = NTXentLoss()
    elif method == 'moco':
        model = MoCo(backbone); criterion = NTXentLoss(memory_bank_size=(512, 128))
    elif method == 'nnclr':
        model = NNCLR(backbone); criterion = NTXentLoss()
        memory_bank = NNMemoryBankModule(size=(512, 128))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.06)
    print('Starting Training', method)
    for epoch in range(epochs):
        total_loss = 0
        for (x0, x1), _, _ in dl:
            if method == 'simclr':
                loss = criterion(model(x0), model(x1))
            elif method == 'moco':
                m = cosine_schedule(epoch, epochs, 0.996, 1)
                update_momentum(model.backbone, model.backbone_momentum, m=m)
                update_momentum(model.projection_head, model.projection_head_momentum, m=m)
                loss = criterion(model(x0), model.forward_momentum(x1))
            else:
                z0, p0 = model(x0); z1, p1 = model(x1)
                z0 = memory_bank(z0, update=False)
                z1 = memory_bank(z1, update=True)
                loss = 0.5 * (criterion(z0, p1) + criterion(z1, p0))
            total_loss += loss.detach()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        print(f"epoch: {epoch:>02}, loss: {total_loss / len(dl):.5f}")

if __name__ == '__main__':
    main()
