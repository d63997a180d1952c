"""A GPT-2 (124M) training loop on one GPU, as users write it: AdamW, bf16
autocast, a loss history of floats. `clean` keeps `loss.item()`; `leak`
keeps the loss tensors themselves (with their autograd graphs: the forum's
"memory grows every iteration" report), the GPU twin of the corpus's
val_loss_keeps_graph. The program measures what the leak holds at the last
optimizer step and prints it as `leaked_bytes` (JSON)."""
import json
import sys

import torch
from transformers import GPT2Config, GPT2LMHeadModel

mode = sys.argv[1] if len(sys.argv) > 1 else "clean"
STEPS = 12
torch.manual_seed(0)
model = GPT2LMHeadModel(GPT2Config(n_layer=6)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
history = []
leaked_bytes = 0


def saved_storages(losses):
    seen = {}
    for loss in losses:
        seen[loss.untyped_storage().data_ptr()] = loss.untyped_storage().nbytes()
        stack, visited = [loss.grad_fn], set()
        while stack:
            node = stack.pop()
            if node is None or id(node) in visited:
                continue
            visited.add(id(node))
            for attr in dir(node):
                if attr.startswith("_saved_"):
                    try:
                        v = getattr(node, attr)
                    except Exception:
                        continue
                    if isinstance(v, torch.Tensor) and v.is_cuda:
                        seen[v.untyped_storage().data_ptr()] = v.untyped_storage().nbytes()
            stack.extend(n for n, _ in node.next_functions)
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    return sum(b for p, b in seen.items() if p not in params)


for step in range(STEPS):
    ids = torch.randint(0, 50257, (4, 256), device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(ids, labels=ids).loss
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    if mode == "leak":
        history.append(loss)  # keeps every step's graph alive
        if step == STEPS - 1:
            leaked_bytes = saved_storages(history)
    else:
        history.append(loss.item())
torch.cuda.synchronize()
print(json.dumps({"mode": mode, "steps": STEPS, "leaked_bytes": leaked_bytes,
                  "allocated": torch.cuda.memory_allocated()}), flush=True)
