"""torch.fx graph surgery before training: symbolic_trace a model whose
blocks spell SiLU by hand, replace_pattern() rewrites x * sigmoid(x) into
F.silu, a custom pass folds a constant scale into the next Linear's
weights, the GraphModule is recompiled, checked against the original and
trained."""
import operator

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F
from torch.fx import subgraph_rewriter
from _device import DEVICE  # cuda on the GPU half


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        h = self.fc1(self.norm(x))
        h = h * torch.sigmoid(h)
        return x + self.fc2(h * 0.5)


class Net(nn.Module):
    def __init__(self, dim=64, depth=3):
        super().__init__()
        self.blocks = nn.Sequential(*[Block(dim) for _ in range(depth)])
        self.head = nn.Linear(dim, 10)

    def forward(self, x):
        return self.head(self.blocks(x))


def pattern(x):
    return x * torch.sigmoid(x)


def replacement(x):
    return F.silu(x)


def fold_scales(gm: fx.GraphModule) -> int:
    """mul(h, c) feeding a Linear: scale the Linear's weight by c instead."""
    folded = 0
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or node.target is not operator.mul:
            continue
        if not isinstance(node.args[1], float) or len(node.users) != 1:
            continue
        user = next(iter(node.users))
        if user.op != "call_module" or not isinstance(gm.get_submodule(user.target), nn.Linear):
            continue
        linear = gm.get_submodule(user.target)
        with torch.no_grad():
            linear.weight.mul_(node.args[1])
        user.replace_input_with(node, node.args[0])
        gm.graph.erase_node(node)
        folded += 1
    gm.recompile()
    return folded


def main():
    torch.manual_seed(0)
    model = Net().to(DEVICE)
    reference = Net().to(DEVICE)
    reference.load_state_dict(model.state_dict())
    gm = fx.symbolic_trace(model)
    rewritten = len(subgraph_rewriter.replace_pattern(gm, pattern, replacement))
    folded = fold_scales(gm)
    x = torch.randn(16, 64, device=DEVICE)
    torch.testing.assert_close(gm(x), reference(x), rtol=1e-4, atol=1e-5)
    opt = torch.optim.AdamW(gm.parameters(), lr=1e-3)
    for step in range(20):
        x, y = torch.randn(32, 64, device=DEVICE), torch.randint(0, 10, (32,), device=DEVICE)
        loss = F.cross_entropy(gm(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("rewritten", rewritten, "folded", folded, "loss", round(loss.item(), 3))


if __name__ == "__main__":
    main()
