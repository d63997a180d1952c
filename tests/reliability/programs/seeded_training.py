"""A small seeded training loop whose losses must not change under memlife."""
import torch

torch.manual_seed(1234)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
data = torch.randn(64, 32)
target = torch.randint(0, 4, (64,))
for step in range(20):
    optimizer.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(data), target)
    loss.backward()
    optimizer.step()
    # repr of the exact float32 bits: a one-ulp change shows.
    print(f"{step} {loss.item().hex()}")
