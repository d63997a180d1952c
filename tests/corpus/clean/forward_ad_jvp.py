"""Forward-mode AD (torch.autograd.forward_ad): directional derivatives of a
network's output through dual tensors (make_dual / unpack_dual), used as a
Jacobian-vector-product regulariser added to the training loss, and
torch.func.jvp for the same product on a second model."""
import torch
import torch.autograd.forward_ad as fwAD
import torch.nn as nn
from torch.func import functional_call, jvp
from _device import DEVICE  # cuda on the GPU half


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 16)).to(DEVICE)
    probe_model = nn.Sequential(nn.Linear(16, 16), nn.Tanh()).to(DEVICE)
    params = list(model.parameters()) + list(probe_model.parameters())
    opt = torch.optim.SGD(params, lr=0.01)
    for step in range(10):
        x = torch.randn(32, 16, device=DEVICE)
        tangent = torch.randn_like(x)
        with fwAD.dual_level():
            out = model(fwAD.make_dual(x, tangent))
            primal, directional = fwAD.unpack_dual(out)
        probe_params = dict(probe_model.named_parameters())
        _, jvp_out = jvp(lambda inp: functional_call(probe_model, probe_params, (inp,)), (x,), (tangent,))
        loss = (primal - x).pow(2).mean() + 1e-3 * directional.pow(2).mean() + 1e-3 * jvp_out.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(step, round(loss.item(), 4))


if __name__ == "__main__":
    main()
