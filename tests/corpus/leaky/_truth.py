"""Ground-truth helpers shared by the leak programs of this folder.

Not a corpus program (run_corpus.py skips files whose name starts with "_").
The programs run as `python3 tests/corpus/leaky/<name>.py` (or under
torchrun), so this folder is on sys.path and they `from _truth import ...`.

Each leak program measures the bytes it leaks itself and hands them, with the
finding kind it expects, to write_truth(); the corpus tests compare that with
what memlife reports.
"""
import json
import os

import torch


def write_truth(nbytes, kind, rank0_only=False):
    """Write {"bytes": nbytes, "kind": kind} as JSON to $MEMLIFE_CORPUS_TRUTH,
    when that is set. rank0_only: only torch.distributed rank 0 writes (for
    torchrun programs, which measure per rank)."""
    path = os.environ.get("MEMLIFE_CORPUS_TRUTH")
    if not path:
        return
    if rank0_only:
        import torch.distributed as dist

        if dist.get_rank() != 0:
            return
    with open(path, "w") as f:
        json.dump({"bytes": int(nbytes), "kind": kind}, f)


def storage_ptrs(*tensor_iterables):
    """The data pointers of the storages of every tensor given (e.g. a
    model's parameters and buffers), to leave out of a count."""
    return {t.untyped_storage().data_ptr() for ts in tensor_iterables for t in ts}


def distinct_storage_bytes(tensors, exclude_ptrs=()):
    """Bytes of the distinct storages behind `tensors` (each storage counted
    once however many tensors view it), leaving out storages without data
    and those whose data pointer is in exclude_ptrs."""
    seen = {}
    for t in tensors:
        st = t.untyped_storage()
        if st.data_ptr() and st.data_ptr() not in exclude_ptrs:
            seen[st.data_ptr()] = st.nbytes()
    return sum(seen.values())


def graph_saved_tensors(roots):
    """Every tensor an autograd graph still saves: walk the grad_fn nodes from
    `roots` (None entries are skipped) and read their _saved_* fields (fields
    freed by a backward without retain_graph raise and are skipped)."""
    out, seen, stack = [], set(), [r for r in roots if r is not None]
    keep = []  # the nodes visited stay alive, so their id()s stay unique
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        keep.append(node)
        for name in dir(node):
            if not name.startswith("_saved_"):
                continue
            try:
                v = getattr(node, name)
            except RuntimeError:  # freed by a backward without retain_graph
                continue
            if isinstance(v, torch.Tensor):
                out.append(v)
            elif isinstance(v, (tuple, list)):
                out.extend(t for t in v if isinstance(t, torch.Tensor))
        for nxt, _ in node.next_functions:
            if nxt is not None:
                stack.append(nxt)
    return out
