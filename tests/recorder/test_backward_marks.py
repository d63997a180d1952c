"""Each backward pass a Python thread runs is marked, begin and end, with the
stack of its call: on CUDA the autograd engine's thread runs no Python, and
what it allocates takes that stack in the analyzer."""

from conftest import line_of, run_script

BACKWARDS = """
    import torch

    class FailsInBackward(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            raise RuntimeError("fails inside the engine")

    w = torch.randn(32, 32, requires_grad=True)
    x = torch.randn(8, 32)
    (x @ w).sum().backward()  # TENSOR-BACKWARD
    torch.autograd.grad((x @ w).sum(), [w])  # AUTOGRAD-GRAD
    try:
        FailsInBackward.apply(x @ w).sum().backward()  # RAISES
    except RuntimeError:
        pass
"""


def test_each_backward_call_is_marked_with_its_line(tmp_path):
    proc, traces = run_script(tmp_path, BACKWARDS)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (trace,) = traces
    marks = [m for m in trace.of("mark")
             if m["kind"] == "label" and (m["label"] or "").startswith("memlife.backward")]
    # A backward that raises inside the engine is closed too.
    assert [m["label"] for m in marks] == ["memlife.backward begin", "memlife.backward end"] * 3
    for begin, marker in zip(marks[::2], ["TENSOR-BACKWARD", "AUTOGRAD-GRAD", "RAISES"]):
        lines = [f["line"] for f in begin["stack"] if f["file"].endswith("prog.py")]
        assert lines and lines[0] == line_of(BACKWARDS, marker), begin["stack"]
