"""Step marks come from optimizer steps: one per outermost step."""

from conftest import run_script

CONTAINER_STEPS = """
    import torch, torch.nn as nn
    from torch.optim import Optimizer

    class OptimizersContainer(Optimizer):
        # As torchtitan's: an Optimizer over every model part's optimizer,
        # whose step() steps each of them.
        def __init__(self, parts):
            self.optimizers = [torch.optim.SGD(parts[0].parameters(), lr=0.1),
                               torch.optim.AdamW(parts[1].parameters(), lr=1e-3)]
            params = [p for part in parts for p in part.parameters()]
            Optimizer.__init__(self, params, {"lr": 0.1})

        def step(self, closure=None):
            for optimizer in self.optimizers:
                optimizer.step()

        def zero_grad(self, set_to_none=True):
            for optimizer in self.optimizers:
                optimizer.zero_grad(set_to_none)

    parts = [nn.Linear(64, 64), nn.Linear(64, 8)]
    optimizers = OptimizersContainer(parts)
    kept = torch.zeros(1000)  # a program global: every walk names it
    for _ in range(6):
        optimizers.zero_grad()
        parts[1](parts[0](torch.randn(16, 64))).sum().backward()
        optimizers.step()
"""


def test_a_container_of_optimizers_steps_once_per_step(tmp_path):
    proc, traces = run_script(tmp_path, CONTAINER_STEPS)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (trace,) = traces
    steps = [m for m in trace.of("mark") if m["kind"] == "step"]
    assert [m["step"] for m in steps] == [1, 2, 3, 4, 5, 6]
    assert {m["label"] for m in steps} == {"Optimizer.step#OptimizersContainer.step"}
    # The holder walks run after the 1st, 2nd and 4th steps (each before
    # that step's mark, so at step counts 0, 1 and 3) and at exit (6).
    walks = {m["step"] for m in trace.of("mark")
             if m["kind"] == "holder" and (m["label"] or "").startswith("__main__.kept")}
    assert walks == {0, 1, 3, 6}
