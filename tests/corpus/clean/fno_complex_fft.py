"""A Fourier neural operator layer (the FNO papers' SpectralConv): rfft2,
complex weights multiplied per mode with einsum, view_as_real /
view_as_complex to keep the weights as real Parameters, irfft2; trained with
Adam on a smoothing task."""
import os

import torch
import torch.nn as nn

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


class SpectralConv2d(nn.Module):
    def __init__(self, channels, modes):
        super().__init__()
        self.modes = modes
        scale = 1 / (channels * channels)
        # complex weights stored as a real tensor with a trailing dim of 2
        self.weight = nn.Parameter(scale * torch.randn(channels, channels, modes, modes, 2))

    def forward(self, x):
        b, c, h, w = x.shape
        x_ft = torch.fft.rfft2(x)
        out_ft = torch.zeros(b, c, h, w // 2 + 1, dtype=torch.cfloat, device=x.device)
        weight = torch.view_as_complex(self.weight)
        out_ft[:, :, :self.modes, :self.modes] = torch.einsum(
            "bixy,ioxy->boxy", x_ft[:, :, :self.modes, :self.modes], weight)
        return torch.fft.irfft2(out_ft, s=(h, w))


class FNO(nn.Module):
    def __init__(self, channels=8, modes=6):
        super().__init__()
        self.lift = nn.Conv2d(1, channels, 1)
        self.spectral = nn.ModuleList(SpectralConv2d(channels, modes) for _ in range(2))
        self.pointwise = nn.ModuleList(nn.Conv2d(channels, channels, 1) for _ in range(2))
        self.project = nn.Conv2d(channels, 1, 1)

    def forward(self, x):
        x = self.lift(x)
        for spectral, pointwise in zip(self.spectral, self.pointwise):
            x = torch.nn.functional.gelu(spectral(x) + pointwise(x))
        return self.project(x)


def main():
    torch.manual_seed(0)
    model = FNO().to(DEVICE)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    blur = torch.ones(1, 1, 5, 5, device=DEVICE) / 25
    for step in range(10):
        x = torch.randn(4, 1, 32, 32, device=DEVICE)
        target = torch.nn.functional.conv2d(x, blur, padding=2)
        loss = (model(x) - target).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        spectrum = torch.view_as_real(torch.fft.rfft2(model(x).detach()))
        print(step, round(loss.item(), 5), tuple(spectrum.shape))


if __name__ == "__main__":
    main()
