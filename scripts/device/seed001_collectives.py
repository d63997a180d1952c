# Seed 001 on one NCCL rank: functional all_gather_into_tensor in a loop.
#   unwaited: never wait_tensor -> c10d warns "N unwaited collective calls"
#   waited:   wait_tensor after each -> nothing held
#   compiled: all_gather -> view(dtype) -> wait_tensor under torch.compile
import os, sys
import torch
import torch.distributed as dist

mode = sys.argv[1]
n = int(os.environ.get("SEED001_N", "5"))
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", str(29500 + os.getpid() % 1000))
dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda:0"))
group = dist.group.WORLD.group_name
funcol = torch.ops._c10d_functional
x = torch.ones(1 << 20, device="cuda")  # 4 MiB of float32



def gather_view_wait(t):
    g = funcol.all_gather_into_tensor(t, 1, group)
    v = g.view(torch.int32)
    return funcol.wait_tensor(v) + 0


for i in range(n):
    if mode == "unwaited":
        funcol.all_gather_into_tensor(x, 1, group)  # result dropped, never waited
    elif mode == "waited":
        out = funcol.all_gather_into_tensor(x, 1, group)
        funcol.wait_tensor(out)
        del out
    elif mode == "compiled":
        f = torch.compile(gather_view_wait)
        f(x)
torch.cuda.synchronize()
print("allocated_after", torch.cuda.memory_allocated(), flush=True)
dist.destroy_process_group()
