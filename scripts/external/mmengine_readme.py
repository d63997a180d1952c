# mmengine's README "Get Started" example (ResNet on CIFAR-10 with a
# BaseModel, a BaseMetric and a Runner), on generated 32x32 images, ResNet-18
# (pip install mmengine; 0.10.7 here):
#   python3 mmengine_readme.py          2 epochs, validation and a checkpoint each
#   python3 mmengine_readme.py iters    40 iterations: AdamW with accumulation 2 and
#                                       clipping, warm-up then cosine, EMAHook
import sys

import torch, torch.nn.functional as F, torchvision
from torch.utils.data import TensorDataset
from mmengine.model import BaseModel
from mmengine.evaluator import BaseMetric
from mmengine.runner import Runner


class MMResNet(BaseModel):
    def __init__(self):
        super().__init__()
        self.resnet = torchvision.models.resnet18(num_classes=10)

    def forward(self, imgs, labels, mode):
        x = self.resnet(imgs)
        if mode == "loss":
            return {"loss": F.cross_entropy(x, labels)}
        elif mode == "predict":
            return x, labels


class Accuracy(BaseMetric):
    def process(self, data_batch, data_samples):
        score, gt = data_samples
        self.results.append({"batch_size": len(gt), "correct": (score.argmax(dim=1) == gt).sum().cpu()})

    def compute_metrics(self, results):
        total_correct = sum(item["correct"] for item in results)
        total_size = sum(item["batch_size"] for item in results)
        return dict(accuracy=100 * total_correct / total_size)


g = torch.Generator().manual_seed(0)
train_set = TensorDataset(torch.randn(512, 3, 32, 32, generator=g), torch.randint(0, 10, (512,), generator=g))
valid_set = TensorDataset(torch.randn(128, 3, 32, 32, generator=g), torch.randint(0, 10, (128,), generator=g))
collate = lambda batch: dict(imgs=torch.stack([b[0] for b in batch]), labels=torch.stack([b[1] for b in batch]))
train_dataloader = dict(batch_size=32, dataset=train_set, sampler=dict(type="DefaultSampler", shuffle=True),
                        collate_fn=collate, num_workers=2, persistent_workers=True)
val_dataloader = dict(batch_size=32, dataset=valid_set, sampler=dict(type="DefaultSampler", shuffle=False),
                      collate_fn=collate, num_workers=2, persistent_workers=True)
iterations = "iters" in sys.argv
runner = Runner(
    model=MMResNet(),
    work_dir="./work_dir",
    train_dataloader=train_dataloader,
    optim_wrapper=(dict(optimizer=dict(type="AdamW", lr=0.001), accumulative_counts=2, clip_grad=dict(max_norm=1.0))
                   if iterations else dict(optimizer=dict(type="SGD", lr=0.001, momentum=0.9))),
    param_scheduler=([dict(type="LinearLR", start_factor=0.1, by_epoch=False, begin=0, end=10),
                      dict(type="CosineAnnealingLR", by_epoch=False, begin=10, end=40)] if iterations else None),
    custom_hooks=[dict(type="EMAHook", momentum=0.01)] if iterations else None,
    train_cfg=(dict(by_epoch=False, max_iters=40, val_interval=20) if iterations
               else dict(by_epoch=True, max_epochs=2, val_interval=1)),
    val_dataloader=val_dataloader,
    val_cfg=dict(),
    val_evaluator=dict(type=Accuracy),
    default_hooks=dict(checkpoint=(dict(type="CheckpointHook", interval=20, by_epoch=False, max_keep_ckpts=1)
                                   if iterations else dict(type="CheckpointHook", interval=1)),
                       logger=dict(type="LoggerHook", interval=4)),
)
runner.train()
