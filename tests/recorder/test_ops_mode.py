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


INSIDE_FUNCTION = """
import torch


class Scale(torch.autograd.Function):
    # torch.compile runs a whole compiled graph inside one such apply
    # (CompiledFunction): the program's own ops run in there.
    @staticmethod
    def forward(ctx, x):
        return x.mul(2)[1:33]

    @staticmethod
    def backward(ctx, g):
        return g.new_zeros(64)


x = torch.randn(64, requires_grad=True)
for _ in range(5):
    y = Scale.apply(x)
"""


def test_top_records_the_ops_an_autograd_function_runs(tmp_path):
    proc, (t,) = run_script(tmp_path, INSIDE_FUNCTION)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    names = op_names(t)
    assert "Scale" in names, sorted(set(names))
    # Recorded although they run inside the Function's range, and the
    # view they make is attributed to its own op.
    assert names.count("aten::mul") >= 5 and names.count("aten::slice") >= 5, sorted(set(names))
    assert "aten::slice" in {v["op"] for v in t.of("tensor") if v["is_view"]}


BOTH_STEP_SIGNALS = """
import torch
import memlife

model = torch.nn.Linear(8, 8)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(4):   # optimizer steps mark steps until the program marks its own
    opt.step()
for _ in range(6):
    model(torch.randn(2, 8)).sum().backward()
    opt.step()
    memlife.mark_step()
"""


def test_one_step_per_iteration_when_a_loop_gives_both_step_signals(tmp_path):
    proc, (t,) = run_script(tmp_path, BOTH_STEP_SIGNALS)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    steps = [m["step"] for m in t.of("mark") if m["kind"] == "step"]
    assert steps == list(range(1, 11)), steps
