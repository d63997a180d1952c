"""Workloads for bench/rss/rss_bench.py; prints the process's peak RSS.

python3 workload.py churn|bert|views [iterations]
Prints "work_seconds S" (the workload's own time, imports left out) and
"peak_rss_kib N" (VmHWM from /proc/self/status).
"""

import sys

import torch


def churn(iterations):
    # Many tensors of mixed sizes created, viewed and freed; a few kept
    # for a while (a sliding window), as a data pipeline or cache would.
    torch.manual_seed(0)
    window = []
    sizes = [16, 200, 3000, 40_000, 300_000, 600_000]
    for i in range(iterations):
        made = []
        for j, n in enumerate(sizes):
            t = torch.randn(n)
            v = t[: n // 2].view(-1)
            u = (v * 2 + 1).sum()
            made.append(t if j % 2 == 0 else v.clone())
            del u
        window.append(made)
        if len(window) > 8:
            window.pop(0)


def views(iterations):
    # Views that outlive their bases (a window of 64): what the death
    # sweeper walks with the GIL held, every sweep.
    torch.manual_seed(0)
    kept = []
    for i in range(iterations):
        base = torch.randn(4096 + i % 7)
        kept.append(base[:64])
        del base
        if len(kept) > 64:
            kept.pop(0)
        (kept[-1] * 2).sum()


def bert(iterations):
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=8000,
        hidden_size=256,
        num_hidden_layers=4,
        num_attention_heads=4,
        intermediate_size=1024,
        max_position_embeddings=256,
    )
    model = BertForMaskedLM(config)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for i in range(iterations):
        seq = 32 + (i * 37) % 96  # varying shapes, as real batches
        ids = torch.randint(0, config.vocab_size, (8, seq))
        out = model(input_ids=ids, labels=ids)
        out.loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)


def peak_rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


if __name__ == "__main__":
    import time

    kind = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else {"churn": 300, "views": 20000}.get(kind, 10)
    started = time.perf_counter()
    {"churn": churn, "bert": bert, "views": views}[kind](n)
    print(f"work_seconds {time.perf_counter() - started:.6f}", flush=True)
    print(f"peak_rss_kib {peak_rss_kib()}", flush=True)
