"""A DCGAN-style loop (pytorch/examples dcgan): a generator and a
discriminator, one Adam each; the discriminator steps on fake.detach(), the
generator through the discriminator; fixed noise sampled for a preview every
few steps."""
import os

import torch
import torch.nn as nn

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half
NZ = 16


def generator():
    return nn.Sequential(nn.ConvTranspose2d(NZ, 32, 4, 1, 0, bias=False), nn.BatchNorm2d(32), nn.ReLU(True),
                         nn.ConvTranspose2d(32, 16, 4, 2, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU(True),
                         nn.ConvTranspose2d(16, 3, 4, 2, 1, bias=False), nn.Tanh())


def discriminator():
    return nn.Sequential(nn.Conv2d(3, 16, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
                         nn.Conv2d(16, 32, 4, 2, 1, bias=False), nn.BatchNorm2d(32),
                         nn.LeakyReLU(0.2, inplace=True), nn.Conv2d(32, 1, 4, 1, 0, bias=False),
                         nn.Flatten(), nn.Sigmoid())


def main():
    torch.manual_seed(0)
    net_g, net_d = generator().to(DEVICE), discriminator().to(DEVICE)
    opt_g = torch.optim.Adam(net_g.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(net_d.parameters(), lr=2e-4, betas=(0.5, 0.999))
    criterion = nn.BCELoss()
    fixed_noise = torch.randn(8, NZ, 1, 1, device=DEVICE)
    preview = None
    for step in range(12):
        real = torch.rand(16, 3, 16, 16, device=DEVICE) * 2 - 1
        label = torch.full((16, 1), 1.0, device=DEVICE)
        net_d.zero_grad()
        err_real = criterion(net_d(real), label)
        err_real.backward()
        fake = net_g(torch.randn(16, NZ, 1, 1, device=DEVICE))
        label.fill_(0.0)
        err_fake = criterion(net_d(fake.detach()), label)
        err_fake.backward()
        opt_d.step()
        net_g.zero_grad()
        label.fill_(1.0)
        err_g = criterion(net_d(fake), label)
        err_g.backward()
        opt_g.step()
        if step % 4 == 0:
            with torch.no_grad():
                preview = net_g(fixed_noise).detach().cpu()
        print(step, round((err_real + err_fake).item(), 4), round(err_g.item(), 4))
    print("preview", tuple(preview.shape))


if __name__ == "__main__":
    main()
