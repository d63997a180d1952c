# DeepSpeed ZeRO-3 on one GPU, with or without DeepCompile (seed 000 in the
# real framework). Launched with plain python (a one-rank NCCL group).
#   python deepspeed_zero3.py compile|eager [--truth]
# Prints, per step, torch.cuda.memory_allocated() once the step is done.
# With --truth (a run outside memlife, compile mode) it also prints the
# ground truth of seed 000: the bytes each step's final release_param left
# allocated (see wrap_release).
import json
import os
import sys

import torch

mode = sys.argv[1]
truth = "--truth" in sys.argv
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29531")
os.environ.setdefault("RANK", "0")
os.environ.setdefault("LOCAL_RANK", "0")
os.environ.setdefault("WORLD_SIZE", "1")

import deepspeed  # noqa: E402

torch.manual_seed(0)
HIDDEN = 1024


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(HIDDEN, HIDDEN) for _ in range(4))

    def forward(self, x, y):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return torch.nn.functional.mse_loss(x, y)


config = {
    "train_micro_batch_size_per_gpu": 8,
    "gradient_accumulation_steps": 1,
    "zero_allow_untested_optimizer": True,
    "bf16": {"enabled": True},
    "zero_optimization": {"stage": 3, "stage3_param_persistence_threshold": 0},
    "compile": {"deepcompile": mode == "compile"},
}
model = Model()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
engine, _, _, _ = deepspeed.initialize(model=model, optimizer=optimizer, config=config)
if mode == "compile":
    # Gather and release every step: the default schedule adds selective
    # gathering after a warm-up, which keeps parameters persistent once
    # memory allows and so would hide what the release does.
    from deepspeed.compile.passes import zero3_compile

    engine.compile(schedule=[(0, [zero3_compile.add_z3_gather_release])])

# The ground truth of seed 000 (--truth runs only): DeepCompile's release
# op, wrapped where the compiled code looks it up (torch.ops.dc...default,
# an inductor fallback kernel). On a parameter's final release (its use
# count, counted as the C++ executor counts it, reaches 0) the gathered
# buffer (the parameter's full size) should be freed: the bytes of it that
# torch.cuda.memory_allocated() does not lose across the call are the bytes
# the release left allocated. 0.19.2 frees them there (resize to 0 bytes).
releases = []


def wrap_release():
    """After the first step: the graph passes compare node targets with the
    real op, the compiled code looks it up when it runs."""
    real = torch.ops.dc.release_param.default
    gathered = {p.ds_id: p.ds_numel * p.ds_tensor.element_size() for p in engine.module.parameters()}
    use_count = {}

    class Release:
        default = None

        def __call__(self, dummy, graph_id, ds_id, n_users):
            before = torch.cuda.memory_allocated()
            out = real(dummy, graph_id, ds_id, n_users)
            freed = before - torch.cuda.memory_allocated()
            if use_count.get(ds_id, 0) == 0:
                use_count[ds_id] = n_users
            use_count[ds_id] -= 1
            if use_count[ds_id] == 0:
                phase = "backward" if torch._C._current_autograd_node() is not None else "forward"
                releases.append({"ds_id": ds_id, "gathered": gathered[ds_id], "freed": freed,
                                 "phase": phase})
            return out

    packet = Release()
    Release.default = packet
    torch.ops.dc.release_param = packet


device = engine.device
x = torch.randn(8, HIDDEN, device=device, dtype=torch.bfloat16)
y = torch.randn(8, HIDDEN, device=device, dtype=torch.bfloat16)
for step in range(6):
    loss = engine(x, y)
    engine.backward(loss)
    engine.step()
    torch.cuda.synchronize()
    line = {"step": step, "allocated": torch.cuda.memory_allocated(), "loss": float(loss)}
    if truth:
        line["final_releases"] = len(releases)
        line["gathered_at_final_release"] = sum(r["gathered"] for r in releases)
        line["freed_at_final_release"] = sum(r["freed"] for r in releases)
        line["left_allocated_by_final_release"] = sum(max(r["gathered"] - r["freed"], 0) for r in releases)
        for phase in ("forward", "backward"):
            line["left_allocated_" + phase] = sum(
                max(r["gathered"] - r["freed"], 0) for r in releases if r["phase"] == phase)
        releases.clear()
    print("STEP", json.dumps(line), flush=True)
    if truth and mode == "compile" and step == 0:
        wrap_release()
print("DEEPSPEED", deepspeed.__version__, "mode", mode, flush=True)
