"""WGAN-GP (Gulrajani et al.): the critic's gradient penalty takes
torch.autograd.grad of the critic's output with respect to interpolated
inputs with create_graph=True, and the penalty is trained through; the
generator steps every fifth critic step."""
import os

import torch
import torch.nn as nn

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def main():
    torch.manual_seed(0)
    gen = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 32)).to(DEVICE)
    critic = nn.Sequential(nn.Linear(32, 64), nn.LeakyReLU(0.2), nn.Linear(64, 1)).to(DEVICE)
    opt_g = torch.optim.Adam(gen.parameters(), lr=1e-4, betas=(0.5, 0.9))
    opt_c = torch.optim.Adam(critic.parameters(), lr=1e-4, betas=(0.5, 0.9))
    for step in range(20):
        real = torch.randn(32, 32, device=DEVICE) + 2
        fake = gen(torch.randn(32, 16, device=DEVICE)).detach()
        alpha = torch.rand(32, 1, device=DEVICE)
        mixed = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
        grads, = torch.autograd.grad(critic(mixed).sum(), mixed, create_graph=True)
        penalty = ((grads.norm(2, dim=1) - 1) ** 2).mean()
        loss_c = critic(fake).mean() - critic(real).mean() + 10 * penalty
        opt_c.zero_grad()
        loss_c.backward()
        opt_c.step()
        if step % 5 == 4:
            loss_g = -critic(gen(torch.randn(32, 16, device=DEVICE))).mean()
            opt_g.zero_grad()
            loss_g.backward()
            opt_g.step()
            print(step, round(loss_c.item(), 3), round(loss_g.item(), 3))


if __name__ == "__main__":
    main()
