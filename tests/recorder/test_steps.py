"""Step marks: one per outermost optimizer step, and in a loop without an
optimizer one per outermost backward pass."""

from conftest import analyze, line_of, run_script

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
    # The holder walks run after the 1st, 2nd, 3rd, 4th and 6th steps (each
    # before that step's mark, so at step counts 0, 1, 2, 3 and 5) and at
    # exit (6).
    walks = {m["step"] for m in trace.of("mark")
             if m["kind"] == "holder" and (m["label"] or "").startswith("__main__.kept")}
    assert walks == {0, 1, 2, 3, 5, 6}


HAND_UPDATED = """
    import torch, torch.nn as nn
    from torch.utils.checkpoint import checkpoint

    model = nn.Sequential(nn.Linear(32, 64), nn.Tanh(), nn.Linear(64, 1))
    for _ in range(6):
        # A reentrant checkpoint runs a backward pass inside the outer one:
        # part of it, not a step.
        out = checkpoint(model, torch.randn(16, 32, requires_grad=True), use_reentrant=True)
        out.sum().backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= 0.01 * p.grad
        model.zero_grad()
"""


def test_a_loop_without_an_optimizer_steps_at_the_end_of_each_backward_pass(tmp_path):
    proc, (trace,) = run_script(tmp_path, HAND_UPDATED)
    assert proc.returncode == 0, proc.stderr[-3000:]
    steps = [m for m in trace.of("mark") if m["kind"] == "step"]
    # Each pass that follows an update ends a step: six passes, five steps.
    assert [m["step"] for m in steps] == [1, 2, 3, 4, 5]
    assert {m["label"] for m in steps} == {"memlife.backward step"}
    passes = [m for m in trace.of("mark") if (m["label"] or "").startswith("memlife.backward ")
              and m["kind"] == "label"]
    assert len(passes) == 24  # the checkpoint's inner passes are marked too
    # Each step follows the end of an outer pass (two ends in a row), before
    # the next pass begins.
    for step in steps:
        before = [m["label"] for m in passes if m["seq"] < step["seq"]]
        assert before[-2:] == ["memlife.backward end"] * 2, before[-4:]


UPDATED_THROUGH_DATA = """
    import torch, torch.nn as nn

    model = nn.Linear(32, 4)
    for _ in range(4):
        model.zero_grad()
        model(torch.randn(8, 32)).pow(2).mean().backward()
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-0.1)  # a version counter of its own
"""

NOT_TRAINING = """
    import torch, torch.nn as nn

    # Saliency maps over a dataset, kept on purpose: backward passes, no
    # update, so no steps (and no growth to report).
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4)).eval()
    maps = []
    for _ in range(6):
        x = torch.randn(8, 32, requires_grad=True)
        model.zero_grad()
        model(x)[:, 1].sum().backward()
        maps.append(x.grad.abs())
"""


# word2vec-style: each step writes only the embedding rows it used (never
# row 0, the element the CPU probe compares) and leaves the head as it is,
# so only the torch plugin's watch of the storages sees the updates (as on
# a GPU, where no element is read).
UPDATED_ROWS = """
    import torch, torch.nn as nn

    emb = nn.Embedding(1000, 16, sparse=True)
    head = nn.Linear(16, 2, bias=False)
    for _ in range(5):
        loss = head(emb(torch.randint(1, 1000, (32,)))).logsumexp(1).mean()
        loss.backward()
        g = emb.weight.grad.coalesce()
        emb.weight.data.index_add_(0, g.indices()[0], g.values(), alpha=-0.1)
        emb.weight.grad = head.weight.grad = None
"""

# In-place ops on everything but the parameters: activations, inputs and
# their gradients.
IN_PLACE_ELSEWHERE = """
    import torch, torch.nn as nn

    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(inplace=True), nn.Dropout(0.1, inplace=True),
                          nn.Linear(64, 4)).eval()
    maps = []
    for _ in range(5):
        x = torch.randn(8, 32, requires_grad=True)
        model.zero_grad()
        model(x)[:, 1].sum().backward()
        x.grad.abs_().div_(x.grad.max())
        maps.append(x.grad)
"""


def test_updates_only_an_op_shows_count_and_in_place_ops_elsewhere_do_not(tmp_path):
    (tmp_path / "rows").mkdir()
    (tmp_path / "elsewhere").mkdir()
    proc, (trace,) = run_script(tmp_path / "rows", UPDATED_ROWS)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert [m["step"] for m in trace.of("mark") if m["kind"] == "step"] == [1, 2, 3, 4]
    proc, (trace,) = run_script(tmp_path / "elsewhere", IN_PLACE_ELSEWHERE)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert [m for m in trace.of("mark") if m["kind"] == "step"] == []


def test_updates_through_data_count_and_passes_without_updates_do_not(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "saliency").mkdir()
    proc, (trace,) = run_script(tmp_path / "data", UPDATED_THROUGH_DATA)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert [m["step"] for m in trace.of("mark") if m["kind"] == "step"] == [1, 2, 3]
    proc, (trace,) = run_script(tmp_path / "saliency", NOT_TRAINING)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert [m for m in trace.of("mark") if m["kind"] == "step"] == []


ACCUMULATING = """
    import torch, torch.nn as nn
    import memlife

    model = nn.Linear(32, 8)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for i in range(5):
        for _ in range(3):  # gradient accumulation: 3 backward passes a step
            model(torch.randn(4, 32)).sum().backward()
        opt.step()
        opt.zero_grad()
    for i in range(4):  # then the program marks its own steps
        model(torch.randn(4, 32)).sum().backward()
        opt.step()
        memlife.mark_step("mine")
"""


def test_accumulated_passes_and_optimizer_steps_count_one_step_per_iteration(tmp_path):
    proc, (trace,) = run_script(tmp_path, ACCUMULATING)
    assert proc.returncode == 0, proc.stderr[-3000:]
    steps = [m for m in trace.of("mark") if m["kind"] == "step"]
    # Nothing changes the parameters between accumulated passes: the
    # optimizer marks every step until the program marks its own; the first
    # of those closes the iteration the optimizer step before it closed.
    assert [m["step"] for m in steps] == list(range(1, 10))
    assert [m["label"] for m in steps] == ["Optimizer.step#SGD.step"] * 6 + ["mine"] * 3


OPTIMIZER_IN_BACKWARD = """
    import torch, torch.nn as nn

    # The PyTorch tutorial's optimizer fused into the backward pass: one
    # optimizer per parameter, stepped from its post-accumulate-grad hook.
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
    optimizers = {p: torch.optim.Adam([p], lr=1e-3) for p in model.parameters()}

    def step_in_backward(param):
        optimizers[param].step()
        optimizers[param].zero_grad()

    for p in model.parameters():
        p.register_post_accumulate_grad_hook(step_in_backward)
    kept = []
    for _ in range(8):
        x = torch.randn(16, 32)
        model(x).sum().backward()
        kept.append(model[0](x))  # KEPT: a growing list of outputs with their graphs
"""


def test_optimizers_stepped_inside_a_backward_pass_make_one_step(tmp_path):
    proc, (trace,) = run_script(tmp_path, OPTIMIZER_IN_BACKWARD)
    assert proc.returncode == 0, proc.stderr[-3000:]
    steps = [m for m in trace.of("mark") if m["kind"] == "step"]
    # Four optimizers step inside each of the 8 backward passes: 8 steps
    # (32 before, one per optimizer, and the list's growth was not seen).
    assert [m["step"] for m in steps] == list(range(1, 9))
    assert {m["label"] for m in steps} == {"memlife.optimizer steps in backward"}
    # Each follows its backward pass's end mark.
    marks = [m for m in trace.of("mark") if m["kind"] in ("step", "label")
             and m["label"] in ("memlife.backward end", "memlife.optimizer steps in backward")]
    assert [m["label"] for m in marks] == ["memlife.backward end",
                                          "memlife.optimizer steps in backward"] * 8
    # ... so the list's growth is found, and where it is kept.
    (finding,) = analyze(trace.path, tmp_path)["findings"]
    assert finding["kind"] == "step_growth", finding["message"]
    stored = {h["path"]: h.get("stored_at", []) for h in finding["evidence"]["held_by"]}
    assert any(path.startswith("__main__.kept[") for path in stored), stored
    assert any(site.endswith(f"prog.py:{line_of(OPTIMIZER_IN_BACKWARD, 'KEPT')}")
               for sites in stored.values() for site in sites), stored
