# Two gloo ranks; rank 0 starts rank 1 with a scrubbed environment (as a
# launcher with `--export=NONE` does), so rank 1 runs without memlife's
# recorder and leaves no trace.
import os
import subprocess
import sys
import tempfile

import torch
import torch.distributed as dist


def rank_main(rank, store_path):
    dist.init_process_group("gloo", init_method=f"file://{store_path}", rank=rank, world_size=2)
    t = torch.ones(256) * rank
    dist.all_reduce(t)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    if len(sys.argv) > 1:
        rank_main(int(sys.argv[1]), sys.argv[2])
        sys.exit(0)
    store = os.path.join(tempfile.mkdtemp(), "store")
    keep = {k: v for k, v in os.environ.items()
            if not k.startswith("MEMLIFE") and k not in ("LD_PRELOAD", "PYTHONPATH")}
    other = subprocess.Popen([sys.executable, __file__, "1", store], env=keep)
    rank_main(0, store)
    sys.exit(other.wait())
