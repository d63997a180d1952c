# memlife-corpus: expect=step_growth
# source: https://github.com/jacobgil/pytorch-grad-cam/issues/132
# Summary: "Memory leakage when calling multiple instances in a loop": a
# GradCAM made again for each input keeps growing memory even after `del
# cam`. The maintainer: "My initial guess is that the ActivationsAndGradients
# isn't deleted, and the hooks aren't un-registered" -- each instance hooks
# the target layer and never removes its hooks, so the layer keeps every
# instance, and each keeps the activations and gradients its hooks saw. Fixed
# by keeping the hooks' handles and removing them in release() (the `with`
# form). Issue #117 is the same in training ("after just 11 epochs,
# 441GB/441GB"), a CAM made in each validation pass.
#
# Here a torchvision ResNet-18 is trained; after each optimizer step a new
# GradCam (the library's 1.x ActivationsAndGradients: a forward hook on
# layer4 keeping its output, a hook on that output keeping its gradient)
# explains one probe image. Its hooks stay: every later forward and backward,
# the training's too, runs the hooks of every earlier GradCam. The gradients
# are made inside backward, on CUDA by the autograd engine's own thread.
# --fixed: each GradCam removes its hooks when done.
import os
import sys

import torch
import torch.nn as nn
import torchvision

from _truth import distinct_storage_bytes, write_truth

STEPS = 10
DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


class GradCam:
    def __init__(self, model, layer):
        self.model = model
        self.activations = []
        self.gradients = []
        self.handles = [layer.register_forward_hook(self.save_activation)]

    def save_activation(self, module, inputs, output):
        self.activations.append(output.detach())  # LEAK-HOLD
        output.register_hook(self.save_gradient)

    def save_gradient(self, grad):
        # Gradients arrive in reverse order of the forwards.
        self.gradients = [grad.detach()] + self.gradients  # LEAK-HOLD

    def __call__(self, image, category):
        self.activations, self.gradients = [], []
        scores = self.model(image)  # LEAK-ALLOC (the activations)
        self.model.zero_grad(set_to_none=True)
        scores[:, category].sum().backward()  # LEAK-ALLOC (the gradients)
        weights = self.gradients[0].mean(dim=(2, 3), keepdim=True)
        return torch.relu((weights * self.activations[0]).sum(dim=1)).cpu()

    def release(self):
        for handle in self.handles:
            handle.remove()


def kept_by_hooks(layer):
    """What the GradCams still hooked on `layer` keep: each storage once."""
    cams = [hook.__self__ for hook in layer._forward_hooks.values()
            if isinstance(getattr(hook, "__self__", None), GradCam)]
    return distinct_storage_bytes([t for cam in cams for t in cam.activations + cam.gradients])


def main():
    fixed = "--fixed" in sys.argv
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    model = torchvision.models.resnet18(num_classes=10).to(DEVICE)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    probe = torch.randn(1, 3, 64, 64, generator=g).to(DEVICE)
    for step in range(STEPS):
        model.train()
        x = torch.randn(8, 3, 64, 64, generator=g).to(DEVICE)
        y = torch.randint(0, 10, (8,), generator=g).to(DEVICE)
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.cross_entropy(model(x), y)  # LEAK-ALLOC (activations)
        loss.backward()  # LEAK-ALLOC (gradients of layer4's output)
        opt.step()

        model.eval()
        cam = GradCam(model, model.layer4)
        heatmap = cam(probe, category=int(step % 10))
        if fixed:
            cam.release()
        del cam
    # What the hooks keep at the end, the last explanation's (made after
    # the last optimizer step) included.
    retained = kept_by_hooks(model.layer4)
    print("heatmap %s; %d bytes kept by the hooks at the end" % (tuple(heatmap.shape), retained))
    write_truth(retained, "none" if fixed else "step_growth")


if __name__ == "__main__":
    main()
