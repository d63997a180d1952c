# Issue 14: in-process recording. memlife.record() on real frameworks (HF
# transformers, torchvision, Lightning) under the pytest plugin's --memlife-in-process:
# each leaky test fails with one leaked_by_block naming its line and holder,
# each clean one passes, and a block after a leaky one does not inherit its
# leak. Also: an incomplete in-process recording fails the block, and the
# block marks' labels are the ones include/memlife/memlife.h documents.
import json
import os
import pathlib
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

SOURCE = pathlib.Path(os.environ.get("MEMLIFE_SOURCE_DIR", pathlib.Path(__file__).parents[2]))
CASES = pathlib.Path(__file__).parent / "record_cases" / "test_frameworks.py"


def environment():
    assert os.environ.get("MEMLIFE_BIN"), "MEMLIFE_BIN must name the memlife to test"
    env = dict(os.environ, PYTHONPATH=str(SOURCE / "python"), OMP_NUM_THREADS="1")
    for name in ("LD_PRELOAD", "MEMLIFE_OUTPUT_DIR", "MEMLIFE_TORCH_PLUGIN"):
        env.pop(name, None)
    return env


def line_of(marker):
    for n, text in enumerate(CASES.read_text().splitlines(), 1):
        if marker in text:
            return n
    raise AssertionError(marker)


def test_frameworks_in_process(tmp_path):
    junit = tmp_path / "junit.xml"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "memlife.pytest_plugin",
                           "-p", "no:cacheprovider", "--memlife-in-process",
                           f"--junitxml={junit}", str(CASES)],
                          cwd=tmp_path, env=environment(), capture_output=True, text=True,
                          timeout=900)
    log = proc.stdout[-6000:] + proc.stderr[-3000:]
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    failed = {name for name, c in cases.items() if c.find("failure") is not None}
    # Lightning's predict loop keeping its last call's predictions, after a
    # call before the block, passes: the block freed the previous call's.
    assert failed == {"test_gpt2_eval_keeps_logits", "test_resnet_probe_keeps_features",
                      "test_lightning_predictions_kept_across_calls"}, log
    assert not any(c.find("skipped") is not None or c.find("error") is not None
                   for c in cases.values()), log
    assert len(cases) == 8, log
    for name, marker, holder in (
            ("test_gpt2_eval_keeps_logits", "LEAK-LINE logits", "test_frameworks._ALL_LOGITS[*]"),
            ("test_resnet_probe_keeps_features", "LEAK-LINE features",
             "test_frameworks._FEATURES[*]"),
            ("test_lightning_predictions_kept_across_calls", "LEAK-LINE predictions",
             "test_frameworks._PREDICTIONS[*]")):
        failure = cases[name].find("failure")
        text = failure.text or failure.get("message", "")
        assert "1 finding(s)" in text and text.count("leaked_by_block:") == 1, text
        assert f"held by {holder}, stored at {CASES}:{line_of(marker)}" in text, text


def test_incomplete_recording_fails_the_block(tmp_path):
    env = environment()
    env["MEMLIFE_TORCH_PLUGIN"] = ""  # the user turned the torch plugin off
    script = ("import torch, memlife\n"
              "with memlife.record() as r:\n"
              "    kept = torch.ones(1000)\n"
              "print('ERRORS', r.errors)\n"
              "try:\n"
              "    r.assert_no_leaks()\n"
              "except AssertionError as e:\n"
              "    print('RAISED', e)\n")
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "incomplete recording: torch_plugin_not_loaded" in proc.stdout, proc.stdout
    assert "RAISED memlife: block 1" in proc.stdout, proc.stdout


def test_mark_labels_are_the_documented_ones():
    # The labels the analyzer reads (memlife.h) and the Python side writes.
    header = (SOURCE / "include" / "memlife" / "memlife.h").read_text()
    defined = dict(re.findall(r'#define (MEMLIFE_(?:BLOCK|COMM_HOOK|BACKWARD|HOLDER|METRIC|EPOCH)_\w+) "([^"]*)"',
                              header))
    sys.path.insert(0, str(SOURCE / "python"))
    import memlife
    from memlife import _holders, _record
    assert defined == {"MEMLIFE_BLOCK_BEGIN_PREFIX": _record.BLOCK_BEGIN_PREFIX,
                       "MEMLIFE_BLOCK_END_PREFIX": _record.BLOCK_END_PREFIX,
                       "MEMLIFE_COMM_HOOK_BEGIN": memlife.COMM_HOOK_BEGIN,
                       "MEMLIFE_COMM_HOOK_END": memlife.COMM_HOOK_END,
                       "MEMLIFE_BACKWARD_BEGIN": memlife.BACKWARD_BEGIN,
                       "MEMLIFE_BACKWARD_END": memlife.BACKWARD_END,
                       "MEMLIFE_BACKWARD_STEP_LABEL": memlife.BACKWARD_STEP,
                       "MEMLIFE_HOLDER_CYCLE_ROOT": _holders.CYCLE_ROOT,
                       "MEMLIFE_HOLDER_NUMBER_WITH_GRAPH": _holders.NUMBER_WITH_GRAPH,
                       "MEMLIFE_HOLDER_EXIT_COLLECT_BEGIN": _holders.EXIT_COLLECT_BEGIN,
                       "MEMLIFE_HOLDER_EXIT_COLLECT_END": _holders.EXIT_COLLECT_END,
                       "MEMLIFE_METRIC_RESET_BEGIN": memlife.METRIC_RESET_BEGIN,
                       "MEMLIFE_METRIC_RESET_END": memlife.METRIC_RESET_END,
                       "MEMLIFE_EPOCH_END_BEGIN": memlife.EPOCH_END_BEGIN,
                       "MEMLIFE_EPOCH_END_END": memlife.EPOCH_END_END}


def test_asking_for_a_block_the_trace_lacks_is_an_error():
    trace = SOURCE / "traces" / "gpu" / "record_blocks.mltrace"  # three blocks (H200)
    proc = subprocess.run([os.environ["MEMLIFE_BIN"], "analyze", str(trace), "--block", "9",
                           "-o", os.devnull], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].endswith(
        "record_blocks.mltrace: no memlife.record() block 9 (the trace has 3 block(s))"), lines


DDP_RANK_BLOCKS = """
import torch, torch.distributed as dist, torch.nn as nn
import memlife
from torch.nn.parallel import DistributedDataParallel as DDP

def train():
    model = DDP(nn.Linear(16, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(4):
        loss = model(torch.randn(8, 16)).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()

dist.init_process_group("gloo")
with memlife.record() as rec:
    train()
# Each rank writes its own file: the ranks share torchrun's stdout, where
# print's separate writes of two ranks interleave ("RANKRANK 1 ...").
with open(f"rank{dist.get_rank()}.errors", "w") as out:
    out.write(repr(rec.errors))
dist.destroy_process_group()
"""


def test_each_rank_judges_its_own_block(tmp_path):
    # Under torchrun every rank records its own block and analyzes its own
    # trace: the other rank's trace is not missing from it (a block used to
    # warn "missing_trace: no trace of rank 1 of 2", which fails the block).
    script = tmp_path / "ddp_blocks.py"
    script.write_text(DDP_RANK_BLOCKS)
    proc = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                           "--nproc_per_node=2", str(script)], cwd=tmp_path, env=environment(),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    errors = {rank: (tmp_path / f"rank{rank}.errors").read_text() for rank in (0, 1)}
    assert errors == {0: "[]", 1: "[]"}, proc.stdout[-4000:]


OPTIMIZER_IN_BACKWARD = """
import json, sys
import torch, torch.nn as nn
import memlife

FIXED = sys.argv[1] == "fixed"
LIBRARY = sys.argv[1] == "library"

def fine_tune():
    # The optimizer step fused into the backward pass, as the PyTorch
    # tutorial writes it: each parameter's hook closes over the dict of
    # optimizers, which holds the parameter. PyTorch keeps tensor hooks in
    # C++, so gc.collect() cannot free the cycle: the model and its Adam
    # state outlive fine_tune().
    model = nn.Sequential(nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 10))
    optimizers = {p: torch.optim.Adam([p], lr=1e-3) for p in model.parameters()}

    def step_in_backward(param):
        optimizers[param].step()
        optimizers[param].zero_grad()

    handles = [p.register_post_accumulate_grad_hook(step_in_backward)  # LEAK-LINE hook
               for p in model.parameters()]
    for _ in range(3):
        nn.functional.cross_entropy(model(torch.randn(8, 128)), torch.randint(0, 10, (8,))).backward()
    kept = sum(p.nbytes for p in model.parameters()) + sum(
        t.nbytes for o in optimizers.values() for s in o.state.values() for t in s.values())
    if FIXED:
        for h in handles:
            h.remove()
    if LIBRARY:  # a library's module state keeps them too: reachable, not a cycle gc cannot free
        import types
        sys.modules["some_library"] = library = types.ModuleType("some_library")
        library.registry = [optimizers]
    return kept

with memlife.record() as rec:
    kept = fine_tune()
print(json.dumps({"kept": kept, "findings": rec.findings}))
"""


def test_a_cycle_through_a_tensor_hook_is_named(tmp_path):
    # A leak no root reaches: the walk at the block's end searches the
    # tensors it did not reach for a reference cycle back to themselves and
    # names it (before, "no Python reference path reaches it"). Its fixed
    # twin removes the hooks: no finding.
    script = tmp_path / "optimizer_in_backward.py"
    script.write_text(OPTIMIZER_IN_BACKWARD)
    results = {}
    for mode in ("leak", "fixed", "library"):
        proc = subprocess.run([sys.executable, str(script), mode], cwd=tmp_path, env=environment(),
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-4000:]
        results[mode] = json.loads(proc.stdout.strip().splitlines()[-1])
    assert results["fixed"]["findings"] == [], results["fixed"]
    (finding,) = results["leak"]["findings"]
    assert finding["kind"] == "leaked_by_block", finding
    assert finding["bytes"] == results["leak"]["kept"], (finding["bytes"], results["leak"]["kept"])
    assert finding["message"].endswith(
        "held by a reference cycle that gc.collect() could not free (one of its references is "
        "held in C++, where the collector cannot see it): Parameter._post_accumulate_grad_hooks"
        "[*]<function step_in_backward>.optimizers.keys()"), finding["message"]
    paths = {h["path"] for h in finding["evidence"]["held_by"]}
    assert ("<uncollectable cycle>.Parameter._post_accumulate_grad_hooks[*]"
            "<function step_in_backward>.optimizers[*].state[*][*]") in paths, paths
    # The same cycle, also kept by a library's module state (which the walk
    # does not start from): still the block's leak, but no cycle is blamed.
    library = results["library"]["findings"]
    assert sum(f["bytes"] for f in library) == results["library"]["kept"], library
    assert all(f["kind"] == "leaked_by_block" and "reference cycle" not in f["message"]
               and "held_by" not in f["evidence"] for f in library), library
