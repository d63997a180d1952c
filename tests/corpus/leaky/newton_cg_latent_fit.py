# memlife-corpus: expect=leaked_at_exit
# source: https://github.com/pytorch/pytorch/issues/7343
# source: https://github.com/pytorch/pytorch/issues/78622
# source: https://github.com/rfeinman/pytorch-minimize/issues/29
# Summary: second-order optimizers built on Tensor.backward(create_graph=True)
# (torch-trust-ncg's TrustRegion in #78622, pytorch-minimize's hessp in #29)
# leak: the gradient they leave in `.grad` carries a graph whose
# AccumulateGrad node holds the parameter, so parameter -> .grad -> grad_fn
# -> ... -> parameter is a reference cycle held in C++, which the garbage
# collector cannot see (#7343: "x -> x.grad -> x.grad.grad_fn -> x"). With
# retain_graph (the Hessian-vector products of a CG loop), the graph keeps
# its saved activations too. PyTorch's warning says the fix: reset `.grad`
# to None after use.
#
# Here: per-sample latent-code fitting through a fixed decoder (as SMPL-X
# fitting uses torch-trust-ncg), Newton-CG steps with Hessian-vector
# products. Each sample's last gradient and its graph stay allocated,
# unreachable, until the process dies, and with them what the graph saved
# (the decoder's weights, the images, the codes).
# Leaky: the fitted code is kept as z.detach() and z.grad is left set.
# --fixed: z.grad = None once the sample is fitted.
import gc
import os
import sys
import weakref

import torch
import torch.nn as nn

from _truth import distinct_storage_bytes, graph_saved_tensors, write_truth

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half
SAMPLES = 6
NEWTON_STEPS = 3
CG_STEPS = 4


def hessian_vector(grad, z, v):
    # H v: the gradient of <grad, v>; the graph of `grad` is kept for the
    # next product of the CG loop.
    (hv,) = torch.autograd.grad(grad, z, grad_outputs=v, retain_graph=True)
    return hv


def fit(decoder, target, fixed):
    z = torch.zeros(target.shape[0], 32, device=target.device, requires_grad=True)
    for _ in range(NEWTON_STEPS):
        z.grad = None
        loss = nn.functional.mse_loss(decoder(z), target)
        loss.backward(create_graph=True)  # LEAK-ALLOC (z.grad and its graph)
        grad = z.grad
        # A few CG steps for the Newton direction d ~ H^-1 grad.
        d = torch.zeros_like(z)
        r = grad.detach().clone()
        p = r.clone()
        for _ in range(CG_STEPS):
            hp = hessian_vector(grad, z, p)
            alpha = (r * r).sum() / (p * hp).sum().clamp_min(1e-12)
            d += alpha * p
            r_next = r - alpha * hp
            p = r_next + (r_next * r_next).sum() / (r * r).sum().clamp_min(1e-12) * p
            r = r_next
        with torch.no_grad():
            z -= d
    if fixed:
        z.grad = None
    return z


def main():
    fixed = "--fixed" in sys.argv
    torch.manual_seed(0)
    decoder = nn.Sequential(nn.Linear(32, 512), nn.Tanh(), nn.Linear(512, 784)).to(DEVICE).requires_grad_(False)
    images = torch.rand(SAMPLES, 128, 784, device=DEVICE)
    codes = []
    kept, graphs = [], []
    for i in range(SAMPLES):
        z = fit(decoder, images[i], fixed)
        codes.append(z.detach())
        if z.grad is not None:
            kept.append(z.grad)
            graphs.append(z.grad.grad_fn)
        del z
    # What the cycles keep once main() has returned: each gradient, the saved
    # tensors of its graph (activations, and the decoder weights and images
    # they saved) and each code (its AccumulateGrad node holds z). Nothing
    # else refers to any of it by then.
    leaked = distinct_storage_bytes(kept + graph_saved_tensors(graphs) + codes)
    probes = [weakref.ref(g) for g in kept]
    del kept, graphs
    gc.collect()
    alive = sum(p() is not None for p in probes)
    print(f"{alive} of {len(probes)} gradients alive after gc.collect(); {leaked} B kept at exit")
    write_truth(leaked if alive else 0, "leaked_at_exit")


if __name__ == "__main__":
    main()
