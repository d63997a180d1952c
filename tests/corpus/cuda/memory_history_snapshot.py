"""PyTorch's own memory tooling beside memlife: a training loop run under
torch.cuda.memory._record_memory_history (the memory_viz snapshot as its
docs show it), a snapshot taken with _snapshot() and written with
_dump_snapshot(), history switched off again, a few more steps. Both tools
attach to the caching allocator; the program prints what the snapshot
holds so that scripts/device/observer_effect.sh can compare it with and
without memlife."""
import os
import pickle
import tempfile

import torch
import torch.nn as nn


def main():
    torch.manual_seed(0)
    device = torch.device("cuda")
    model = nn.Sequential(nn.Linear(512, 1024), nn.GELU(), nn.Linear(1024, 512)).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def step():
        x = torch.randn(64, 512, device=device)
        loss = (model(x) - x).pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    torch.cuda.memory._record_memory_history(max_entries=100_000)
    for _ in range(6):
        step()
    snapshot = torch.cuda.memory._snapshot()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "snapshot.pickle")
        torch.cuda.memory._dump_snapshot(path)
        with open(path, "rb") as f:
            dumped = pickle.load(f)
    torch.cuda.memory._record_memory_history(enabled=None)
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    actions = {}
    for trace in snapshot["device_traces"]:
        for entry in trace:
            actions[entry["action"]] = actions.get(entry["action"], 0) + 1
    blocks = sum(len(s["blocks"]) for s in dumped["segments"])
    print("OBSERVED snapshot actions", sorted(actions.items()), "segments",
          len(snapshot["segments"]), "blocks in the dump", blocks)


if __name__ == "__main__":
    main()
