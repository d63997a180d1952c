"""A variational autoencoder with torch.distributions: Normal posterior with
rsample, kl_divergence against the prior, a Bernoulli likelihood with
logits, gradient clipping, and a fused (foreach) Adam."""
import os

import torch
import torch.nn as nn
from torch.distributions import Bernoulli, Normal, kl_divergence

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


class VAE(nn.Module):
    def __init__(self, d=64, z=8):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(d, 128), nn.ReLU(), nn.Linear(128, 2 * z))
        self.dec = nn.Sequential(nn.Linear(z, 128), nn.ReLU(), nn.Linear(128, d))

    def forward(self, x):
        mu, log_sigma = self.enc(x).chunk(2, dim=-1)
        posterior = Normal(mu, log_sigma.exp())
        z = posterior.rsample()
        likelihood = Bernoulli(logits=self.dec(z))
        prior = Normal(torch.zeros_like(mu), torch.ones_like(mu))
        return -(likelihood.log_prob(x).sum(-1) - kl_divergence(posterior, prior).sum(-1)).mean()


def main():
    torch.manual_seed(0)
    model = VAE().to(DEVICE)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=True)
    for step in range(15):
        x = (torch.rand(32, 64, device=DEVICE) > 0.5).float()
        loss = model(x)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, foreach=True)
        opt.step()
        if step % 5 == 0:
            print(step, round(loss.item(), 3))


if __name__ == "__main__":
    main()
