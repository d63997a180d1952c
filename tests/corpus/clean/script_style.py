# Script-style training: everything at module level, no main().
import os

import torch
import torch.nn as nn

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half

torch.manual_seed(0)

X = torch.randn(512, 16, device=DEVICE)
true_w = torch.randn(16, 1, device=DEVICE)
Y = X @ true_w + 0.1 * torch.randn(512, 1, device=DEVICE)

model = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 1)).to(DEVICE)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
loss_fn = nn.MSELoss()
batch_size = 32

history = []
for step in range(20):
    idx = torch.randint(0, X.size(0), (batch_size,), device=DEVICE)
    xb, yb = X[idx], Y[idx]
    pred = model(xb)
    loss = loss_fn(pred, yb)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    history.append(loss.item())

print("first loss %.4f, last loss %.4f" % (history[0], history[-1]))
