"""Collectives on gloo, DataLoader workers (fork) and threads."""

import os
import pathlib
import subprocess

import pytest

from conftest import analyze, run_script

# Starts two ranks of this file over gloo, as torchrun would.
TWO_GLOO_RANKS = """
import os, socket, subprocess, sys
import torch
import torch.distributed as dist
import memlife

if "RANK" not in os.environ:
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), WORLD_SIZE="2")
    procs = [subprocess.Popen([sys.executable, __file__], env=dict(env, RANK=str(r))) for r in range(2)]
    sys.exit(max(p.wait() for p in procs))

dist.init_process_group("gloo")
"""

GLOO = TWO_GLOO_RANKS + """
t = torch.ones(1000)
work = dist.all_reduce(t, async_op=True)
memlife.mark("issued")
work.wait()
memlife.mark("waited")
outs = [torch.empty(1000) for _ in range(2)]
dist.all_gather(outs, t)
assert float(t[0]) == 2.0
dist.destroy_process_group()
"""


def _rank_traces(traces):
    ranks = [t for t in traces if t.of("collective_issue")]
    assert len(ranks) == 2, [str(t.path) for t in traces]
    return ranks


def test_gloo_collectives_are_issued_with_their_tensors(tmp_path):
    proc, traces = run_script(tmp_path, GLOO, timeout=240)
    assert proc.returncode == 0, proc.stderr
    for t in _rank_traces(traces):
        (allreduce,) = t.of("collective_issue", op="c10d::allreduce_")
        assert allreduce["flags"] & 1, "async_op=True not flagged"
        assert allreduce["bytes"] == 4000
        (tensor,) = allreduce["outputs"]
        assert t.of("tensor", tensor_id=tensor)[0]["sizes"] == [1000]
        assert allreduce["inputs"] == [tensor]
        (gather,) = t.of("collective_issue", op="c10d::allgather_")
        assert gather["bytes"] == 8000 and len(gather["outputs"]) == 2
        assert not gather["flags"] & 1
        assert tensor in gather["inputs"]


# Rank 0 raises before a barrier that rank 1 enters (pytorch-ignite's
# cifar10 example did, its dataset unreadable on rank 0); rank 1's barrier
# then fails as its peer is gone. Both fail: neither skipped a collective.
RANK_FAILS = TWO_GLOO_RANKS + """
dist.barrier()
if dist.get_rank() == 0:
    raise RuntimeError("rank 0 cannot read its dataset")
dist.barrier()
"""


def test_a_rank_that_fails_is_no_collective_mismatch(tmp_path):
    proc, traces = run_script(tmp_path, RANK_FAILS, timeout=240, python_path=False)
    assert proc.returncode != 0
    assert "rank 0 cannot read its dataset" in proc.stderr
    ranks = _rank_traces(traces)
    # The uncaught exception's exit status: the interpreter's exit(1).
    assert [t.one("end")["exit_status"] for t in ranks] == [1, 1], proc.stderr
    report = analyze(tmp_path / "traces", tmp_path)
    assert [f["kind"] for f in report["findings"]] == [], report["findings"]
    # Both ranks, and the launcher that exits with their status.
    failed = [w for w in report["warnings"] if w.startswith("process_failed: exited with status 1")]
    assert len(failed) == 3, report["warnings"]


# A rank that gives up with sys.exit(3) (no exception): its status reaches
# the end record through exit() itself.
RANK_EXITS = TWO_GLOO_RANKS + """
dist.barrier()
if dist.get_rank() == 0:
    print("rank 0: no data, giving up", file=sys.stderr)
    sys.exit(3)
dist.barrier()
"""


def test_a_rank_that_calls_sys_exit_is_no_collective_mismatch(tmp_path):
    proc, traces = run_script(tmp_path, RANK_EXITS, timeout=240, python_path=False)
    assert proc.returncode == 3, proc.stderr
    ranks = _rank_traces(traces)
    assert sorted(t.one("end")["exit_status"] for t in ranks) == [1, 3], proc.stderr
    report = analyze(tmp_path / "traces", tmp_path)
    assert [f["kind"] for f in report["findings"]] == [], report["findings"]
    failed = sorted(w.split(" (")[0] for w in report["warnings"] if w.startswith("process_failed"))
    # Rank 0's sys.exit(3), rank 1's failed barrier, the launcher's sys.exit(3).
    assert failed == ["process_failed: exited with status " + s for s in ("1", "3", "3")], \
        report["warnings"]


def test_a_clean_exit_has_status_0(tmp_path):
    proc, traces = run_script(tmp_path, EXIT_CENSUS, python_path=False)
    assert proc.returncode == 0, proc.stderr
    (t,) = traces
    assert t.one("end")["exit_status"] == 0


def _preload_path():
    default = pathlib.Path(__file__).resolve().parents[2] / "build-torch" / "lib"
    return pathlib.Path(os.environ.get("MEMLIFE_LIB_DIR") or default) / "libmemlife_preload.so"


def _preload_has_work_wait():
    out = subprocess.run(["nm", "-D", "--defined-only", str(_preload_path())], capture_output=True, text=True)
    return "memlife_work_wait" in out.stdout


def test_gloo_work_wait_is_recorded(tmp_path):
    # No PYTHONPATH from the test: `memlife run` itself must put the hooks
    # (python/memlife/autoload) on it.
    assert _preload_has_work_wait(), "the preload does not export memlife_work_wait"
    proc, traces = run_script(tmp_path, GLOO, timeout=240, python_path=False)
    assert "deprecated" not in proc.stderr, "the hook changed the program's output"
    assert proc.returncode == 0, proc.stderr
    for t in _rank_traces(traces):
        (allreduce,) = t.of("collective_issue", op="c10d::allreduce_")
        issued = t.one("mark", label="issued")["seq"]
        waited = t.one("mark", label="waited")["seq"]
        waits = [w for w in t.of("collective_wait") if issued < w["seq"] < waited]
        assert len(waits) == 1 and waits[0]["how"] in ("work_wait", 1)
        assert waits[0]["collective_id"] == allreduce["collective_id"]
        assert waits[0]["tensors"] == allreduce["outputs"]


LOADER = """
import threading
import torch
from torch.utils.data import DataLoader, Dataset

class Squares(Dataset):
    def __len__(self):
        return 64
    def __getitem__(self, i):
        return torch.full((16,), float(i)) ** 2

def main():
    loader = DataLoader(Squares(), batch_size=8, num_workers=2, multiprocessing_context="fork")
    total = sum(float(b.sum()) for b in loader)
    assert total > 0

    def work(n):
        x = torch.randn(64, 64)
        for _ in range(200):
            x = (x @ x).tanh()[: 64 - n % 2].contiguous().resize_(64, 64)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    print("done")

if __name__ == "__main__":
    main()
"""


SPAWN = """
import os, socket
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

def rank_main(rank, world, port):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    t = torch.ones(10)
    dist.all_reduce(t)
    dist.destroy_process_group()

if __name__ == "__main__":
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
    mp.spawn(rank_main, args=(2, port), nprocs=2)
"""


def test_spawned_ranks_learn_rank_from_init_process_group(tmp_path):
    proc, traces = run_script(tmp_path, SPAWN, timeout=240, python_path=False)
    assert proc.returncode == 0, proc.stderr
    ranks = sorted(p["rank"] for t in traces for p in t.of("process") if p.get("rank", -1) >= 0)
    assert ranks == [0, 1], [t.of("process") for t in traces]
    worlds = {p["world_size"] for t in traces for p in t.of("process") if p.get("rank", -1) >= 0}
    assert worlds == {2}


EXIT_CENSUS = """
import torch
kept = torch.zeros(12345)
"""


def test_census_at_interpreter_exit(tmp_path):
    proc, traces = run_script(tmp_path, EXIT_CENSUS, python_path=False)
    assert proc.returncode == 0, proc.stderr
    (t,) = traces
    exits = t.censuses(reason="request")
    assert exits, "no census from the atexit hook"
    last = exits[-1]["census_id"]
    sizes = [s["storage_bytes"] for s in t.census_storages(last)]
    assert 12345 * 4 in sizes


def test_dataloader_fork_workers_and_threads_complete(tmp_path):
    proc, traces = run_script(tmp_path, LOADER, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "done" in proc.stdout
    assert len(traces) >= 3, "expected the program and both forked workers"
    for t in traces:
        assert t.summary["complete"] and not t.summary["damaged"], t.path
    main = max(traces, key=lambda t: len(t.records))
    streams_with_ops = {r["stream"] for r in main.of("op", phase="begin", name="aten::matmul")}
    assert len(streams_with_ops) >= 4
    # The workers' traces describe their own tensors.
    workers = [t for t in traces if t is not main]
    assert all(w.of("tensor") for w in workers)
