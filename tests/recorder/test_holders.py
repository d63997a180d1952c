"""What the holder walk names, in a real process under `memlife run`."""

import re

from conftest import line_of, run_python, run_script

def _holder_paths(trace):
    """The paths the walks wrote (each holder mark's first line)."""
    return {m["label"].split("\n")[0] for m in trace.of("mark") if m["kind"] == "holder" and m["label"]}


def _walked_paths(tmp_path, source, **kwargs):
    """The paths the walks wrote in `source`, run under memlife as one
    process that must succeed."""
    proc, traces = run_script(tmp_path, source, **kwargs)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (trace,) = traces
    return _holder_paths(trace)


# A graph compiled with freezing keeps its parameters as globals of the
# module inductor generated and loaded from its cache directory. The
# generated module also holds the graph's kernels: objects the walk must not
# descend into (Triton kernels on a GPU made each walk take four times as
# long), stood in for here by one more object that holds a tensor.
FROZEN_GRAPH = """
    import os, sys, types
    import torch, torch.nn as nn
    import torch._inductor.config

    os.environ["TORCHINDUCTOR_CACHE_DIR"] = sys.argv[1]
    torch._inductor.config.freezing = True
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 8)).eval()
    compiled = torch.compile(model)
    with torch.no_grad():
        compiled(torch.randn(4, 64))
    generated = [m for m in list(sys.modules.values())
                 if (getattr(m, "__file__", None) or "").startswith(sys.argv[1])]
    assert generated, "inductor loaded no module from its cache directory"
    for m in generated:
        m.kernel_stand_in = types.SimpleNamespace(workspace=torch.zeros(1000))
    kept = [torch.zeros(1000)]
    opt = torch.optim.SGD(nn.Linear(4, 4).parameters(), lr=0.1)
    for _ in range(2):  # memlife walks the holders after steps 1 and 2
        opt.step()
"""


def test_compiled_code_is_walked_for_its_tensors_only(tmp_path):
    cache = tmp_path / "inductor-cache"
    labels = _walked_paths(tmp_path, FROZEN_GRAPH.replace("sys.argv[1]", repr(str(cache))),
                            timeout=600)
    assert "__main__.kept[0]" in labels, labels
    # The frozen parameters are named, by the generated module's global.
    assert any("._frozen_param" in label for label in labels), labels
    # The kernels' stand-in is not walked into.
    assert not any("kernel_stand_in" in label for label in labels), labels


# A hook registered by a function that has returned holds what it stores
# only through its closure or its bound instance; both are walked.
HOOKS = """
    import torch, torch.nn as nn

    class Recorder:
        def __init__(self):
            self.outputs = []

        def save(self, module, inputs, output):
            self.outputs.append(output.detach())

    def watch(layer):
        grads = []
        layer.weight.register_hook(lambda g: grads.append(g.clone()))
        layer.register_forward_hook(Recorder().save)

    model = nn.Linear(64, 64)
    watch(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(2):  # memlife walks the holders after steps 1 and 2
        model(torch.randn(8, 64)).sum().backward()
        opt.step()
"""


def test_hooks_are_walked_through_closures_and_bound_instances(tmp_path):
    labels = _walked_paths(tmp_path, HOOKS)
    # Hook dicts are keyed by handle ids: any id.
    named = {re.sub(r"_hooks\[\d+\]", "_hooks[*]", label) for label in labels}
    assert "__main__.model._forward_hooks[*]<method save>.__self__.outputs[0]" in named, labels
    assert "__main__.model.weight._backward_hooks[*]<function <lambda>>.grads[0]" in named, labels


# pytorch-ignite: an epoch-wise metric attached to an engine (its `started`,
# a reset, runs at each EPOCH_STARTED) holds at most the epoch's batches, and
# the walk writes that bound; the same metric updated by hand and never
# reset is an unbounded list.
IGNITE_METRICS = """
    import torch, torch.nn as nn
    from ignite.contrib.metrics import ROC_AUC
    from ignite.engine import Engine

    attached, by_hand = ROC_AUC(), ROC_AUC()
    model = nn.Linear(8, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def step(engine, batch):
        out = model(batch).squeeze(1)
        out.sum().backward()
        opt.step()
        probs, target = torch.sigmoid(out.detach()), (batch[:, 0] > 0).long()
        by_hand.update((probs.clone(), target.clone()))
        return probs, target

    trainer = Engine(step)
    attached.attach(trainer, "auc")
    trainer.run([torch.randn(16, 8) for _ in range(5)], max_epochs=1)
"""


def test_an_engines_epoch_metric_is_walked_with_its_epoch_bound(tmp_path):
    labels = _walked_paths(tmp_path, IGNITE_METRICS)
    # Reached through the program's global first, the bound is still known.
    assert "__main__.attached<ROC_AUC epoch_length=5>._predictions[4]" in labels, labels
    assert "__main__.by_hand._predictions[4]" in labels, labels


# tensor.numpy() shares the tensor's memory: an array keeps its tensor's
# storage through its base (a slice of it through the array it was sliced
# from), and the walk names the storage there.
NUMPY_ARRAYS = """
    import numpy as np
    import torch

    kept = [torch.randn(1000).numpy(), np.asarray(torch.randn(1000))[::2]]
    opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    for _ in range(2):  # memlife walks the holders after steps 1 and 2
        opt.step()
"""


def test_numpy_arrays_are_walked_to_the_tensors_they_share(tmp_path):
    labels = _walked_paths(tmp_path, NUMPY_ARRAYS)
    assert "__main__.kept[0].base" in labels, labels
    assert "__main__.kept[1].base.base" in labels, labels


# torcheval keeps no update count: memlife counts each metric's updates
# (the call the program made, not a subclass's super().update()) and notes
# its first compute since its last reset. One computed after its last
# update holds what the program chose to score at once; one computed and
# then updated again without a reset has no bound.
TORCHEVAL_METRICS = """
    import torch, torch.nn as nn
    from torcheval.metrics import BinaryAUROC

    class Clipped(BinaryAUROC):
        def update(self, input, target):
            return super().update(input.clamp(0, 1), target)

    scored, rescored = Clipped(), BinaryAUROC()
    model = nn.Linear(8, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(4):
        x = torch.randn(16, 8)
        out = model(x).squeeze(1)
        out.sum().backward()
        opt.step()
        probs, target = torch.sigmoid(out.detach()), (x[:, 0] > 0).float()
        scored.update(probs, target)
        rescored.update(probs.clone(), target.clone())
        if step == 1:
            rescored.compute()
    scored.compute()
"""


def test_a_torcheval_metric_computed_after_its_updates_is_walked_with_that_bound(tmp_path):
    labels = _walked_paths(tmp_path, TORCHEVAL_METRICS)
    assert "__main__.scored<Clipped computed_after_updates=4>.inputs[3]" in labels, labels
    assert "__main__.rescored.inputs[3]" in labels, labels
    assert not any(label.startswith("__main__.rescored<") and "inputs[3]" in label for label in labels), labels


# A Dataset's dict keyed by sample index holds one entry per sample at most:
# the walk writes the dataset's length as its bound. What else the dataset
# keeps (a list it appends to, a dict keyed otherwise) has none.
DATASET_CACHES = """
    import torch
    from torch.utils.data import Dataset

    class Cached(Dataset):
        def __init__(self):
            self.cache, self.seen, self.by_name = {}, [], {}

        def __len__(self):
            return 10

        def __getitem__(self, i):
            self.cache[i] = torch.full((8,), float(i))
            self.seen.append(torch.zeros(4))
            self.by_name[f"sample{i}"] = torch.ones(2)
            return self.cache[i]

    data = Cached()
    for i in (3, 7):
        data[i]
    opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    opt.step()  # memlife walks the holders after step 1
"""


def test_a_datasets_per_sample_cache_is_walked_with_its_length(tmp_path):
    labels = _walked_paths(tmp_path, DATASET_CACHES)
    assert "__main__.data.cache<dict dataset_len=10>[7]" in labels, labels
    assert "__main__.data.seen[1]" in labels, labels
    assert "__main__.data.by_name['sample7']" in labels, labels


# A container a running loop makes anew (or empties) at each pass holds one
# pass's worth: the walk writes the loop's line as its bound, also for a
# function that the loop calls at each pass. One made before the loop, an
# argument, or a name bound to a container that lives on, has none.
LOOP_MADE = """
    import torch

    opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    kept = {"outputs": []}

    def train_one_epoch(seen):
        outputs = []
        lives_on = kept["outputs"]
        for step in range(4):
            outputs.append(torch.zeros(8))
            seen.append(torch.zeros(8))
            lives_on.append(torch.zeros(8))
            opt.step()  # steps 5 to 8: memlife walks after step 8

    def train(epochs):
        history = []
        for epoch in range(epochs):
            preds, targets = [], []  # loop A: made anew at each epoch
            for step in range(2):
                preds.append(torch.zeros(8))
                targets.append(torch.ones(8))
                history.append(torch.full((4,), 2.0))
                opt.step()  # memlife walks the holders after steps 1 and 2

    train(1)
    cleared = []
    for epoch in range(1):  # loop B: empties it at each epoch's end
        for step in range(2):
            cleared.append(torch.zeros(16))
            opt.step()  # steps 3 and 4: module level
        cleared.clear()
    seen = []
    for epoch in range(1):  # loop C: calls train_one_epoch at each pass
        train_one_epoch(seen)
"""


def test_a_container_made_at_each_pass_of_a_running_loop_is_walked_with_that_loop(tmp_path):
    labels = _walked_paths(tmp_path, LOOP_MADE)
    loop_a = line_of(LOOP_MADE, "for epoch in range(epochs)")
    assert f"train().preds<list loop_line={loop_a}>[0]" in labels, labels
    assert f"train().targets<list loop_line={loop_a}>[0]" in labels, labels
    assert "train().history[0]" in labels, labels
    loop_b = line_of(LOOP_MADE, "for epoch in range(1)")
    assert f"__main__.cleared<list loop_line={loop_b}>[0]" in labels, labels
    loop_c = line_of(LOOP_MADE, "loop C")
    assert f"train_one_epoch().outputs<list loop_line={loop_c}>[0]" in labels, labels
    assert "__main__.seen[0]" in labels, labels
    assert "__main__.kept['outputs'][0]" in labels, labels


# A detached loss per step is a record of the run; an undetached one keeps
# its graph (PyTorch's FAQ), which its path says. A tensor subclass that
# only overrides __torch_function__ (fastai's TensorBase, torchvision's
# tv_tensors) holds its own storage and is named; its __torch_function__ is
# never run by the walk.
NUMBERS_AND_SUBCLASSES = """
    import torch, torch.nn as nn

    class Tagged(torch.Tensor):
        calls = 0

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func is not torch.Tensor.__repr__:
                cls.calls += 1
            return super().__torch_function__(func, types, args, kwargs or {})

    model = nn.Linear(8, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    history, with_graphs, tagged = [], [], []
    for step in range(2):  # memlife walks the holders after steps 1 and 2
        loss = model(torch.randn(4, 8)).pow(2).mean()
        loss.backward()
        history.append(loss.detach().clone())
        with_graphs.append(loss)
        tagged.append(torch.full((16,), float(step)).as_subclass(Tagged))
        opt.step()
    calls_before_exit = Tagged.calls
    import atexit
    atexit.register(lambda: print("TAGGED CALLS", Tagged.calls - calls_before_exit))
"""


def test_numbers_say_whether_they_keep_a_graph_and_subclasses_are_named(tmp_path):
    proc, traces = run_script(tmp_path, NUMBERS_AND_SUBCLASSES)
    assert proc.returncode == 0, proc.stderr[-3000:]
    paths = _holder_paths(traces[0])
    assert {"__main__.history[0]", "__main__.history[1]"} <= paths, sorted(paths)
    # The last loss is named first as the global `loss` (the walk is breadth-first).
    assert {"__main__.with_graphs[0]<with grad_fn>", "__main__.loss<with grad_fn>"} <= paths, \
        sorted(paths)
    assert {"__main__.tagged[0]", "__main__.tagged[1]"} <= paths, sorted(paths)
    # The walks (registered before the program's atexit, so run after it)
    # ran none of the subclass's Python.
    assert "TAGGED CALLS 0" in proc.stdout, proc.stdout


# A lazy module in sys.modules (SpeechBrain registers one per optional
# integration) imports its target on attribute access and raises when that
# dependency is missing. The walk read `__file__` through it, so every walk
# of a SpeechBrain program raised and named nothing.
LAZY_MODULE = """
    import sys, types
    import torch, torch.nn as nn

    class LazyModule(types.ModuleType):
        # As SpeechBrain's: inspect's probes (getmodule reads every
        # module's __file__) get an AttributeError, any other caller the
        # import, which fails.
        touched = 0

        def __getattr__(self, attr):
            if sys._getframe(1).f_code.co_filename.endswith("inspect.py"):
                raise AttributeError(attr)
            LazyModule.touched += 1
            raise ImportError(f"Lazy import of {self.__name__} failed")

    sys.modules["lazy_integration"] = LazyModule("lazy_integration")
    model = nn.Linear(8, 8)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    kept = []
    for step in range(2):  # memlife walks the holders after steps 1 and 2
        kept.append(torch.zeros(64))
        opt.step()
    print("TOUCHED", LazyModule.touched)
"""


def test_a_lazy_module_neither_stops_the_walk_nor_is_imported(tmp_path):
    proc, traces = run_script(tmp_path, LAZY_MODULE)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert {"__main__.kept[0]", "__main__.kept[1]"} <= _holder_paths(traces[0])
    assert "TOUCHED 0" in proc.stdout, proc.stdout


# What an epoch-start hook of the program's class makes anew holds one
# epoch's worth; what __init__ makes lives on. Reached through a weak proxy
# (as Lightning's profiler holds its module), the referent's class counts.
EPOCH_HOOKS = """
    import weakref
    import torch, torch.nn as nn

    class Stats:
        def __init__(self):
            self.scores = []

    class Scorer:
        def __init__(self):
            self.history = []

        def on_epoch_begin(self, epoch):
            self.preds, self.targets = [], []
            self.stats = Stats()

    kept = [Scorer()]
    scorer = weakref.proxy(kept[0])  # the walk reaches the Scorer through it first
    opt = torch.optim.SGD(nn.Linear(4, 4).parameters(), lr=0.1)
    for epoch in range(1):  # a framework's epoch loop, calling the hook
        scorer.on_epoch_begin(epoch)
        for step in range(2):  # memlife walks the holders after steps 1 and 2
            scorer.preds.append(torch.zeros(8))
            scorer.stats.scores.append(torch.zeros(8))
            scorer.history.append(torch.zeros(8))
            opt.step()
"""


def test_what_an_epoch_start_hook_makes_anew_is_walked_with_its_line(tmp_path):
    proc, traces = run_script(tmp_path, EPOCH_HOOKS)
    assert proc.returncode == 0, proc.stderr[-3000:]
    paths = _holder_paths(traces[0])
    hook = line_of(EPOCH_HOOKS, "self.preds, self.targets = [], []")
    stats = line_of(EPOCH_HOOKS, "self.stats = Stats()")
    assert f"__main__.scorer.preds<list epoch_hook_line={hook}>[0]" in paths, sorted(paths)
    assert f"__main__.scorer.stats<Stats epoch_hook_line={stats}>.scores[0]" in paths, sorted(paths)
    assert "__main__.scorer.history[0]" in paths, sorted(paths)


# A training package run as `python -m trainpkg` from site-packages: the
# script (trainpkg/__main__.py) is the program wherever it lives, so the
# loop it calls in the package is walked, as when a console script in bin/
# starts the same package.
PACKAGE_MAIN = "from trainpkg.train import fit\nfit()\n"
PACKAGE_TRAIN = """
import torch
import torch.nn as nn


def fit():
    model = nn.Linear(8, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    history = []
    for _ in range(4):
        loss = model(torch.randn(16, 8)).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        history.append(torch.zeros(1000))
"""


def test_a_package_run_as_main_from_site_packages_has_its_loop_walked(tmp_path):
    site = tmp_path / "lib" / "site-packages"
    package = site / "trainpkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text(PACKAGE_MAIN)
    (package / "train.py").write_text(PACKAGE_TRAIN)
    proc, traces = run_python(tmp_path, ["-m", "trainpkg"], extra_path=[site])
    assert proc.returncode == 0, proc.stderr[-3000:]
    (trace,) = traces
    paths = _holder_paths(trace)
    assert "fit().history[0]" in paths, sorted(paths)
