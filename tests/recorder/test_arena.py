"""The plugin's own memory lives in its arena, outside the program's malloc
heap (issue 15: its containers interleaved with the program's allocations
fragmented glibc's heap). Counts only, no RSS: not timing- or load-flaky."""

from conftest import run_script

SOURCE = """
import ctypes
import torch

def plugin():
    with open("/proc/self/maps") as f:
        for line in f:
            if "libmemlife_torch.so" in line:
                return ctypes.CDLL(line.split()[-1])
    raise SystemExit("plugin not loaded")

def stats(lib):
    mapped, in_use = ctypes.c_uint64(), ctypes.c_uint64()
    lib.memlife_torch_arena_stats(ctypes.byref(mapped), ctypes.byref(in_use))
    return mapped.value, in_use.value

lib = plugin()
keep = []
for i in range(3000):
    t = torch.ones(16 + i % 50)
    keep.append(t[1:].view(-1) * 2)
    if len(keep) > 2000:
        keep.pop(0)
mapped, in_use = stats(lib)
print("arena", mapped, in_use, flush=True)
"""


def test_plugin_containers_use_the_arena(tmp_path):
    proc, traces = run_script(tmp_path, SOURCE)
    assert proc.returncode == 0, proc.stderr
    line = next(l for l in proc.stdout.splitlines() if l.startswith("arena "))
    mapped, in_use = map(int, line.split()[1:])
    # Thousands of live tensors: their identity tables are in the arena.
    assert in_use > 2000 * 16, line
    assert in_use <= mapped, line
    # Bounded: tables sized to the live tensors, not to every tensor seen.
    assert mapped < 64 * 1024 * 1024, line


MMAP_SOURCE = """
import ctypes
import torch  # loads the plugin

libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
# glibc raises a dynamic threshold to the size of a freed mapping: then a
# 512 KiB block comes from the heap. A fixed 128 KiB one maps it.
libc.free(libc.malloc(4 << 20))
p = libc.malloc(512 << 10)
heap = None
with open("/proc/self/maps") as f:
    for line in f:
        if line.rstrip().endswith("[heap]"):
            lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
            heap = (lo, hi)
print("in_heap", int(heap is not None and heap[0] <= p < heap[1]), flush=True)
libc.free(p)
"""


def _in_heap(proc):
    assert proc.returncode == 0, proc.stderr
    return next(l for l in proc.stdout.splitlines() if l.startswith("in_heap ")).split()[1] == "1"


def test_plugin_fixes_the_mmap_threshold(tmp_path):
    proc, _ = run_script(tmp_path, MMAP_SOURCE)
    assert not _in_heap(proc)


def test_malloc_tune_off_leaves_glibc_alone(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMLIFE_MALLOC_TUNE", "0")
    proc, _ = run_script(tmp_path, MMAP_SOURCE)
    assert _in_heap(proc)
