"""memlife.record() on CUDA with the recorder loaded into a process whose
CUDA is already initialised (a GPT-2 moved to the GPU before the first
block). Block 1: a clean evaluation that keeps only predictions as Python
lists; it makes the process's first cuBLAS calls (cuBLAS takes its
workspace from torch's allocator then and keeps it). Block 2: the evaluation keeps its CUDA
logits in a module list (huggingface/transformers#12878); the program
measures what it keeps. Block 3: a clean AdamW train loop of 3 steps with
the optimizer made inside the block. Prints RESULTS (JSON) and the trace;
the blocks are analyzed on the host (`memlife analyze TRACE --block N`)."""
import json

import torch
import transformers

import memlife

torch.manual_seed(0)
DEV = "cuda"
config = transformers.GPT2Config(n_layer=4, n_head=4, n_embd=256, vocab_size=8192, n_positions=128)
model = transformers.GPT2LMHeadModel(config).to(DEV)
KEPT = []


def evaluate(keep):
    model.eval()
    with torch.no_grad():
        for _ in range(4):
            ids = torch.randint(0, 8192, (8, 128), device=DEV)
            logits = model(input_ids=ids).logits  # ALLOC-LINE
            KEPT.append(logits if keep else logits.argmax(-1).tolist())  # LEAK-LINE
    torch.cuda.synchronize()


def train_steps():
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for _ in range(3):
        ids = torch.randint(0, 8192, (8, 128), device=DEV)
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    torch.cuda.synchronize()


results = {}
with memlife.record(analyze=False) as block:
    evaluate(keep=False)
results["eval_keeps_predictions"] = {"block": block.block, "truth": 0}
KEPT.clear()
with memlife.record(analyze=False) as block:
    evaluate(keep=True)
results["eval_keeps_logits"] = {
    "block": block.block, "truth": sum(t.untyped_storage().nbytes() for t in KEPT)}
KEPT.clear()
with memlife.record(analyze=False) as block:
    train_steps()
results["train_steps"] = {"block": block.block, "truth": 0}
print("RESULTS", json.dumps(results))
print("TRACE", block.trace)
print("allocated at the end", torch.cuda.memory_allocated())
