# memlife-corpus: expect=step_growth
# source: https://github.com/pytorch/pytorch/issues/836
# Summary: "Exploding RAM with simple code": a loop that only stores VGG
# (torchvision) outputs in a list needs GBs; soumith: "you are holding on to
# intermediate states of the vgg graph over each forward" -- outputs computed
# with autograd on keep the whole graph; store .data / run without grad.
#
# Here a torchvision ResNet-18 is fine-tuned; after each optimizer step a
# probe batch is embedded through a forward hook on layer4 that appends the
# hooked output to a list. The probe runs with autograd on and is never
# backwarded, so every stored output keeps the probe's whole graph and the
# activations it saved. --fixed: the probe runs under torch.no_grad() and the
# hook keeps only a float summary.
import os
import sys

import torch
import torch.nn as nn
import torchvision

from _truth import distinct_storage_bytes, graph_saved_tensors, storage_ptrs, write_truth

STEPS = 10
DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def _held_bytes(model, probe_feats):
    """Distinct storages the kept probe outputs and their graphs hold."""
    held = list(probe_feats) + graph_saved_tensors([t.grad_fn for t in probe_feats])
    return distinct_storage_bytes(held, storage_ptrs(model.parameters(), model.buffers()))


def main():
    fixed = "--fixed" in sys.argv
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    model = torchvision.models.resnet18(num_classes=10).to(DEVICE)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    probe_feats = []
    probe_norms = []
    probing = [False]

    def keep_features(module, inputs, output):
        if not probing[0]:
            return
        if fixed:
            probe_norms.append(output.detach().norm().item())
        else:
            probe_feats.append(output)  # LEAK-HOLD (output keeps the probe graph)

    model.layer4.register_forward_hook(keep_features)
    probe_x = None
    for step in range(STEPS):
        model.train()
        x = torch.randn(8, 3, 64, 64, generator=g).to(DEVICE)
        y = torch.randint(0, 10, (8,), generator=g).to(DEVICE)
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()

        model.eval()
        probe_x = torch.randn(4, 3, 64, 64, generator=g).to(DEVICE)  # LEAK-ALLOC (saved by conv1)
        probing[0] = True
        if fixed:
            with torch.no_grad():
                model(probe_x)
        else:
            model(probe_x)  # LEAK-ALLOC (activations saved by the probe graph)
        probing[0] = False
    # What the kept outputs hold at the end, the last probe's (run after the
    # last optimizer step) included.
    retained = _held_bytes(model, probe_feats)
    print("kept %d probe outputs; %d bytes held at the end" % (len(probe_feats), retained))
    write_truth(retained, "none" if fixed else "step_growth")


if __name__ == "__main__":
    main()
