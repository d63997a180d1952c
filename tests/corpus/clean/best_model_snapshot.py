"""Train with validation each epoch, keeping a deep copy of the best
weights (replaced when validation improves) and a float history, then
restore the best weights at the end (the classic early-stopping loop)."""
import copy

import torch
import torch.nn as nn
from _device import DEVICE  # cuda on the GPU half


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 5)).to(DEVICE)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    xv, yv = torch.randn(256, 32, device=DEVICE), torch.randint(0, 5, (256,), device=DEVICE)
    best_loss, best_state, history = float("inf"), None, []
    for epoch in range(8):
        model.train()
        for _ in range(10):
            x, y = torch.randn(32, 32, device=DEVICE), torch.randint(0, 5, (32,), device=DEVICE)
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            val = nn.functional.cross_entropy(model(xv), yv).item()
        history.append(val)
        if val < best_loss:
            best_loss, best_state = val, copy.deepcopy(model.state_dict())
    model.load_state_dict(best_state)
    print("best %.3f of %d epochs" % (best_loss, len(history)))


if __name__ == "__main__":
    main()
