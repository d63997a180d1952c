"""A ZeRO-3-like parameter registry that leaks (seed 000 of memlife's design).

Each "all-gather" fills a padded buffer (the shard size rounded up for every
rank) and hands out a true-shape view of it. Release does what the buggy
runtime did: `registry_tensor.data = torch.empty(0)`. That rebinds the
registry's tensor to a new, empty storage, but the views handed out still
hold the padded storage, so every gathered parameter stays allocated.

Run it under memlife:
    memlife run -o traces -- python3 examples/residual_view.py
    memlife analyze traces
memlife reports a residual_view per parameter: the padded bytes, the bytes
the view can actually reach, and the line that created the view.
"""
import torch

WORLD_SIZE = 4
PARAM_SHAPES = [(1000, 1000), (3000, 500), (777, 333)]


class Registry:
    def __init__(self):
        self.gathered = {}

    def all_gather(self, name, shape):
        numel = shape[0] * shape[1]
        shard = -(-numel // WORLD_SIZE)  # ceil: every rank sends the same count
        padded = torch.empty(shard * WORLD_SIZE)  # the padded gather buffer
        padded.fill_(1.0)  # stands in for the collective writing into it
        self.gathered[name] = padded
        return padded.narrow(0, 0, numel).view(shape)  # the true-shape view

    def release(self, name):
        # The bug: this drops the registry's reference, not the storage.
        self.gathered.pop(name).data = torch.empty(0)


def main():
    registry = Registry()
    model_inputs = []
    for step in range(3):
        views = [registry.all_gather(f"p{i}", s) for i, s in enumerate(PARAM_SHAPES)]
        model_inputs.append(views)  # the compiled graph keeps its inputs alive
        total = sum(v.sum() for v in views)
        for i in range(len(PARAM_SHAPES)):
            registry.release(f"p{i}")
        print(f"step {step}: {float(total):.0f}")
    alive = sum(v.untyped_storage().nbytes() for vs in model_inputs for v in vs)
    print(f"bytes still held by views after release: {alive}")


if __name__ == "__main__":
    main()
