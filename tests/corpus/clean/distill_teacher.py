"""Knowledge distillation: a frozen teacher runs under torch.inference_mode,
a smaller student learns from its softened logits (KL) and the labels; the
student is validated every few steps with its best state kept."""
import copy
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def mlp(width):
    return nn.Sequential(nn.Linear(20, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 5))


def main():
    torch.manual_seed(0)
    teacher = mlp(256).to(DEVICE).eval()
    student = mlp(32).to(DEVICE)
    opt = torch.optim.Adam(student.parameters(), lr=1e-3)
    val_x, val_y = torch.randn(64, 20, device=DEVICE), torch.randint(0, 5, (64,), device=DEVICE)
    best_acc, best_state = -1.0, None
    for step in range(16):
        x, y = torch.randn(32, 20, device=DEVICE), torch.randint(0, 5, (32,), device=DEVICE)
        with torch.inference_mode():
            soft = (teacher(x) / 2.0).softmax(dim=-1)
        logits = student(x)
        kd = F.kl_div(F.log_softmax(logits / 2.0, dim=-1), soft.clone(), reduction="batchmean") * 4.0
        loss = kd + F.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 4 == 3:
            with torch.no_grad():
                acc = (student(val_x).argmax(-1) == val_y).float().mean().item()
            if acc > best_acc:
                best_acc, best_state = acc, copy.deepcopy(student.state_dict())
        print(step, round(loss.item(), 4))
    student.load_state_dict(best_state)
    print("best", best_acc)


if __name__ == "__main__":
    main()
