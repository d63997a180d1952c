"""Iterative magnitude pruning (torch.nn.utils.prune, masks kept as buffers
and applied by forward pre-hooks), made permanent with prune.remove, then
dynamic int8 quantization of the Linear layers for an inference loop."""
import torch
import torch.nn as nn
import torch.nn.utils.prune as prune


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(),
                          nn.Linear(64, 10))
    linears = [m for m in model if isinstance(m, nn.Linear)]
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for rnd in range(3):
        for m in linears:
            prune.l1_unstructured(m, name="weight", amount=0.2)
        for step in range(5):
            x = torch.randn(32, 64)
            y = torch.randint(0, 10, (32,))
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        opt = torch.optim.SGD(model.parameters(), lr=0.05)  # weight_orig is a new parameter
    for m in linears:
        prune.remove(m, "weight")
    sparsity = sum(int((m.weight == 0).sum()) for m in linears) / sum(m.weight.numel() for m in linears)
    quantized = torch.ao.quantization.quantize_dynamic(model.eval(), {nn.Linear}, dtype=torch.qint8)
    with torch.no_grad():
        agree = sum(int((quantized(x).argmax(1) == model(x).argmax(1)).sum())
                    for x in (torch.randn(64, 64) for _ in range(8)))
    print(f"sparsity {sparsity:.2f} agree {agree}")


if __name__ == "__main__":
    main()
