"""An optimizer wrapper in the style of Lookahead (Zhang et al.) and its
public implementations: it wraps an inner AdamW, keeps slow weights in its
own state, syncs every k steps, and delegates state_dict/param_groups; a
OneCycleLR schedule drives the inner optimizer."""
import torch
import torch.nn as nn
from _device import DEVICE  # cuda on the GPU half


class Lookahead(torch.optim.Optimizer):
    def __init__(self, inner, k=5, alpha=0.5):
        self.inner, self.k, self.alpha = inner, k, alpha
        self.param_groups = inner.param_groups
        self.defaults = inner.defaults
        self.state = inner.state
        self.slow = {p: p.detach().clone() for g in self.param_groups for p in g["params"]}
        self.steps = 0

    def zero_grad(self, set_to_none=True):
        self.inner.zero_grad(set_to_none=set_to_none)

    def step(self, closure=None):
        loss = self.inner.step(closure)
        self.steps += 1
        if self.steps % self.k == 0:
            with torch.no_grad():
                for p, slow in self.slow.items():
                    slow += self.alpha * (p - slow)
                    p.copy_(slow)
        return loss


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(24, 48), nn.GELU(), nn.Linear(48, 4)).to(DEVICE)
    inner = torch.optim.AdamW(model.parameters(), lr=1e-3)
    opt = Lookahead(inner)
    sched = torch.optim.lr_scheduler.OneCycleLR(inner, max_lr=1e-2, total_steps=20)
    for step in range(20):
        x, y = torch.randn(32, 24, device=DEVICE), torch.randint(0, 4, (32,), device=DEVICE)
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        sched.step()
        if step % 5 == 0:
            print(step, round(loss.item(), 4))


if __name__ == "__main__":
    main()
