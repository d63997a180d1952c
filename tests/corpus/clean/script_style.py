# Script-style training: everything at module level, no main().
import torch
import torch.nn as nn

torch.manual_seed(0)

X = torch.randn(512, 16)
true_w = torch.randn(16, 1)
Y = X @ true_w + 0.1 * torch.randn(512, 1)

model = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
loss_fn = nn.MSELoss()
batch_size = 32

history = []
for step in range(20):
    idx = torch.randint(0, X.size(0), (batch_size,))
    xb, yb = X[idx], Y[idx]
    pred = model(xb)
    loss = loss_fn(pred, yb)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    history.append(loss.item())

print("first loss %.4f, last loss %.4f" % (history[0], history[-1]))
