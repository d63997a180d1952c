"""GPU only. torch.compile with mode="reduce-overhead": the model's forward
and backward captured as CUDA graphs (their memory from the graphs' private
pool, kept for replay), trained, then an inference loop with its own graph,
as latency-bound training and serving code does."""
import torch
import torch.nn as nn


def main():
    torch.manual_seed(0)
    device = torch.device("cuda")
    model = nn.Sequential(nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 1024), nn.GELU(),
                          nn.Linear(1024, 16)).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, capturable=True)
    step_fn = torch.compile(model, mode="reduce-overhead")
    for step in range(12):
        torch.compiler.cudagraph_mark_step_begin()
        x = torch.randn(64, 256, device=device)
        y = torch.randint(0, 16, (64,), device=device)
        loss = nn.functional.cross_entropy(step_fn(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    model.eval()
    infer = torch.compile(model, mode="reduce-overhead")
    total = 0
    with torch.no_grad():
        for _ in range(12):
            torch.compiler.cudagraph_mark_step_begin()
            total += int(infer(torch.randn(64, 256, device=device)).argmax(1).sum())
    torch.cuda.synchronize()
    print("done", total)


if __name__ == "__main__":
    main()
