# A clean training loop: optimizer with state, transient views, chunking.
import torch


def main():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 64))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    x = torch.randn(32, 64)
    for _ in range(8):
        out = net(x)
        parts = out.chunk(4, dim=0)
        loss = sum(p.transpose(0, 1)[:8].sum() for p in parts)
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
