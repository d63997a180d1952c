# GPT-2-sized training steps (transformers, random init, no download).
#   oracle:   record torch.cuda.memory._record_memory_history over N steps
#             and write its alloc/free events per "address:size"
#   time:     print the median step time (plain, or under memlife)
#   history:  step time with _record_memory_history(stacks="all") on
#   launch[-history]: a launch-bound loop of small CUDA ops, us per iteration
import ctypes, json, os, statistics, sys, time
import torch

mode = sys.argv[1]
out_path = sys.argv[2] if len(sys.argv) > 2 else None
steps = int(os.environ.get("GPT2_STEPS", "8"))
lib = ctypes.CDLL(None)


def mark(label):
    try:
        lib.memlife_mark(label.encode())
    except AttributeError:
        pass


torch.zeros(1, device="cuda")  # lazy CUDA init before any measurement
if mode.startswith("launch"):
    if mode == "launch-history":
        torch.cuda.memory._record_memory_history(stacks="all", max_entries=1_000_000)
    a = torch.randn(64, device="cuda")
    times = []
    for rep in range(int(os.environ.get("LAUNCH_REPS", "7"))):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(2000):
            b = a + 1
            c = b[8:40]
            d = c.sum()
            a = a * 0.999 + d * 0
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) / 2000 * 1e6)
    # The first two repetitions warm caches (memlife's learning included).
    print(json.dumps({"mode": mode, "us_per_iter": statistics.median(times[2:]),
                      "min_us_per_iter": min(times[2:])}), flush=True)
    sys.exit(0)

from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
model = GPT2LMHeadModel(GPT2Config()).cuda()  # 124M parameters
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
ids = torch.randint(0, 50257, (8, 512), device="cuda")


def step():
    loss = model(ids, labels=ids).loss
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


step()  # warm-up: optimizer state, cuBLAS workspaces
torch.cuda.synchronize()
if mode == "oracle":
    torch.cuda.memory._record_memory_history(stacks="python", max_entries=10_000_000)
    mark("oracle_begin")
    for _ in range(steps):
        step()
    torch.cuda.synchronize()
    mark("oracle_end")
    snap = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    counts = {"alloc": {}, "free_requested": {}, "free_completed": {}}
    for device_trace in snap["device_traces"]:
        for e in device_trace:
            if e["action"] in counts:
                k = f'{e["addr"]}:{e["size"]}'
                counts[e["action"]][k] = counts[e["action"]].get(k, 0) + 1
    json.dump(counts, open(out_path, "w"))
    print(json.dumps({k: sum(v.values()) for k, v in counts.items()}), flush=True)
    sys.exit(0)

if mode == "history":
    torch.cuda.memory._record_memory_history(stacks="all", max_entries=1_000_000)
times = []
for _ in range(steps):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    step()
    torch.cuda.synchronize()
    times.append((time.perf_counter() - t0) * 1e3)
print(json.dumps({"mode": mode, "ms_per_step": statistics.median(times[1:])}), flush=True)
