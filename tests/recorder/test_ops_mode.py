"""--ops top: nested ops are charged to the op Python called, and memlife
never blinds another RecordFunction user (the profiler) to them."""

from conftest import run_script

NESTED = """
import torch
x = torch.randn(64)
for _ in range(20):  # past memlife's per-op learning
    y = x + 1        # aten::add runs aten::to / _to_copy / empty_strided / copy_ inside
    z = y[1:33]      # aten::slice runs aten::as_strided inside
with torch.profiler.profile() as prof:
    y = x + 1
    z = y[1:33]
names = [e.name for e in prof.events()]
print("PROFILED", sorted(set(names)))
assert "aten::as_strided" in names and "aten::empty_strided" in names, names
"""


NESTED_OPS = {"aten::to", "aten::_to_copy", "aten::empty_strided", "aten::copy_", "aten::as_strided"}


def op_names(trace):
    return [o["name"] for o in trace.of("op", phase="begin")]


def tensor_ops(trace):
    return {t["op"] for t in trace.of("tensor") if t["op"]}


def test_top_charges_nested_ops_and_leaves_the_profiler_whole(tmp_path):
    proc, (t,) = run_script(tmp_path, NESTED)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert "PROFILED" in proc.stdout  # the profiler saw the nested ops
    names = op_names(t)
    assert "aten::add" in names and "aten::slice" in names
    assert not NESTED_OPS & set(names), names
    # Tensors and allocations are named after the op Python called.
    assert not NESTED_OPS & tensor_ops(t), tensor_ops(t)
    assert {v["op"] for v in t.of("tensor") if v["is_view"]} == {"aten::slice"}
    adds = [a for a in t.of("alloc") if a.get("op") == "aten::add"]
    assert len(adds) >= 20, {a.get("op") for a in t.of("alloc")}


def test_all_observes_nested_ops(tmp_path):
    proc, (t,) = run_script(tmp_path, NESTED, args=("--ops", "all"))
    assert proc.returncode == 0, proc.stderr + proc.stdout
    # The scalar add's wrapped 1 is converted by nested ops: seen there.
    assert NESTED_OPS & tensor_ops(t), tensor_ops(t)
