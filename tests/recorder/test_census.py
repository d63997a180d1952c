"""Censuses list what changed: a dataset kept as tensors is written once.

pytorch/examples' DDP tutorial (ddp-tutorial-series, a dataset of 2,048
pairs of small tensors kept in a list) wrote 1.05 million census_storage
records, 23 MB of trace, in 5 s of training on the H200 when every census
listed every storage.
"""

from conftest import analyze, run_script

DATASET = """
import torch
import memlife

data = [torch.rand(20) for _ in range(300)]  # a dataset kept as tensors
for step in range(70):
    scratch = torch.ones(50) * step  # one storage made, the last one freed
    if step == 10:
        del data[150:]
    memlife.census()
"""


def dataset_storages(t, census_id):
    return {s["storage_id"] for s in t.census_storages(census_id) if s["storage_bytes"] == 80}


def test_a_census_lists_what_changed_since_the_previous_one(tmp_path):
    proc, traces = run_script(tmp_path, DATASET)
    assert proc.returncode == 0, proc.stderr
    (t,) = traces
    censuses = t.censuses(reason="request")
    assert len(censuses) >= 70
    # Whole at the first and the 65th census of the process, changes between.
    phases = [c["phase"] for c in censuses]
    assert phases[:65] == ["begin"] + ["begin_changes"] * 63 + ["begin"], phases

    def written(c):
        return len(t.of("census_storage", census_id=c["census_id"]))

    assert written(censuses[0]) >= 300
    # A census of changes writes the scratch storage made and the one freed,
    # not the 300 dataset tensors.
    quiet = [written(c) for i, c in enumerate(censuses[1:64], 1) if i != 10]
    assert max(quiet) <= 4, quiet
    # The 150 tensors deleted before the 11th census: each listed once, with
    # no holders.
    gone = [s for s in t.of("census_storage", census_id=censuses[10]["census_id"]) if not s["holders"]]
    assert len(gone) >= 150

    # Read back, each census is the whole census: all 300 storages until
    # the deletion, the 150 kept after it, and the 64th census (of changes)
    # reads as the whole 65th that follows it.
    every = [dataset_storages(t, c["census_id"]) for c in censuses[:65]]
    assert all(len(s) == 300 for s in every[:10]), [len(s) for s in every]
    assert all(len(s) == 150 for s in every[10:]), [len(s) for s in every]
    assert every[63] == every[64] and every[10] < every[9]


SPACED = """
import time
import torch
import memlife

data = [torch.rand(4) for _ in range(60000)]  # a census of these takes 5 ms or more
for step in range(40):
    time.sleep(0.002)
    memlife.mark_step()
"""


def test_costly_step_censuses_are_spaced_and_the_report_says_so(tmp_path):
    proc, traces = run_script(tmp_path, SPACED, args=("--stacks", "none"))
    assert proc.returncode == 0, proc.stderr
    (t,) = traces
    (spaced,) = t.of("mark", label="memlife.census spaced")
    assert spaced["address"] >= 5_000_000  # what the census took, ns
    step_censuses = t.censuses(reason="step")
    # At most 1/20 of the time in step censuses: far fewer than the 40 steps.
    assert 1 <= len(step_censuses) < 20, len(step_censuses)
    # A census asked for by the program is never skipped: the exit census.
    assert t.censuses(reason="request")
    (process,) = analyze(t.path, tmp_path)["processes"]
    assert process["step_census_cost_ns"] == spaced["address"]
