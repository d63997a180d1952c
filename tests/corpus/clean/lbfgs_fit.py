"""Full-batch fitting with torch.optim.LBFGS (closure, strong-Wolfe line
search), as in curve fitting and style transfer: its state keeps the last
history_size curvature pairs, filling during the run."""
import os

import torch
import torch.nn as nn

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def main():
    torch.manual_seed(0)
    x = torch.linspace(-3, 3, 512, device=DEVICE).unsqueeze(1)
    y = torch.sin(2 * x) + 0.1 * torch.randn_like(x)
    model = nn.Sequential(nn.Linear(1, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 1)).to(DEVICE)
    opt = torch.optim.LBFGS(model.parameters(), lr=1, max_iter=5, history_size=100,
                            line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        return loss

    for step in range(25):
        loss = opt.step(closure)
    print("loss %.5f" % float(loss))


if __name__ == "__main__":
    main()
