"""Views keeping storages alive, and set_data seen only by the census."""

import json

from conftest import analyze, line_of, run_script

SLICE = """
import torch
import memlife

def make():
    base = torch.arange(1000, dtype=torch.float32)  # ALLOC
    view = base[10:20]  # VIEW
    return base, view

base, view = make()
del base
memlife.mark("base-deleted")
memlife.census()
del view
memlife.mark("view-dropped")
"""


def test_slice_view_keeps_storage_until_dropped(tmp_path):
    proc, traces = run_script(tmp_path, SLICE)
    assert proc.returncode == 0, proc.stderr
    (t,) = traces
    assert t.summary["complete"]
    alloc = next(a for a in t.of("alloc") if a["bytes"] == 4000)
    assert alloc["stack"][0]["line"] == line_of(SLICE, "# ALLOC")
    assert alloc["stack"][0]["function"] == "make"
    assert alloc["stack"][0]["file"].endswith("prog.py")

    base = next(r for r in t.of("tensor") if r["data_address"] == alloc["address"] and r["sizes"] == [1000])
    views = [r for r in t.of("tensor") if r["is_view"] and r["storage_id"] == base["storage_id"]]
    assert views, "no tensor record with is_view on the base's storage"
    view = views[-1]
    assert view["sizes"] == [10] and view["storage_offset"] == 10
    assert view["aliases"] and view["base_tensor_id"] == base["tensor_id"]
    assert view["stack"][0]["line"] == line_of(SLICE, "# VIEW")

    deleted = t.one("mark", label="base-deleted")["seq"]
    dropped = t.one("mark", label="view-dropped")["seq"]
    frees = [f["seq"] for f in t.of("free") if f["address"] == alloc["address"]]
    assert len(frees) == 1 and deleted < frees[0] < dropped

    census = t.censuses(reason="request")[0]["census_id"]
    (storage,) = [s for s in t.census_storages(census) if s["storage_id"] == base["storage_id"]]
    # The base's TensorImpl lives on only as the view's autograd `_base`: it
    # is no holder of its own, and a label mark flags it.
    holders = {h["tensor_id"]: h["reachable_bytes"] for h in storage["holders"]}
    assert holders == {view["tensor_id"]: 40}
    assert storage["use_count"] == 2 and storage["storage_bytes"] == 4000
    flags = [m for m in t.of("mark", label="memlife.census.base_kept_only_by_views")
             if m["storage_id"] == base["storage_id"]]
    assert len(flags) == 1 and flags[0]["address"] == base["tensor_id"]


def test_a_base_still_named_in_python_stays_a_holder(tmp_path):
    source = SLICE.replace("del base\n", "")
    proc, traces = run_script(tmp_path, source)
    assert proc.returncode == 0, proc.stderr
    (t,) = traces
    census = t.censuses(reason="request")[0]["census_id"]
    storages = [s for s in t.census_storages(census) if s["storage_bytes"] == 4000]
    assert len(storages) == 1 and len(storages[0]["holders"]) == 2
    assert not t.of("mark", label="memlife.census.base_kept_only_by_views")


BASE_DELETED = """
import torch
import memlife

base = torch.zeros(1_000_000)  # 4 MB: a one-off view needs 1 MiB of waste
v = base[:1]  # VIEW
del base
memlife.census()
print(float(v.sum()))
"""


def test_analyze_reports_the_view_that_keeps_a_deleted_base(tmp_path):
    proc, traces = run_script(tmp_path, BASE_DELETED)
    assert proc.returncode == 0, proc.stderr
    report = analyze(tmp_path / "traces", tmp_path)
    found = [f for f in report["findings"] if f["kind"] == "residual_view"]
    assert len(found) == 1, report["findings"]
    text = json.dumps(found[0])
    assert f'"line": {line_of(BASE_DELETED, "# VIEW")}' in text, text


SET_DATA = """
import torch
import memlife

registry = torch.zeros(2000)
views = [registry.narrow(0, 0, 100), registry[1000:].view(10, 100)]
memlife.census()
registry.data = torch.empty(0)
memlife.census()
"""


def test_set_data_owner_moves_away_while_views_hold_storage(tmp_path):
    proc, traces = run_script(tmp_path, SET_DATA)
    assert proc.returncode == 0, proc.stderr
    (t,) = traces
    # The third is the exit census of memlife's atexit hook.
    first, second, _ = [c["census_id"] for c in t.censuses(reason="request")]
    owner = next(r for r in t.of("tensor") if r["sizes"] == [2000])
    old_storage = owner["storage_id"]

    (before,) = [s for s in t.census_storages(first) if s["storage_id"] == old_storage]
    assert owner["tensor_id"] in [h["tensor_id"] for h in before["holders"]]
    assert len(before["holders"]) == 3

    (after,) = [s for s in t.census_storages(second) if s["storage_id"] == old_storage]
    holders = [h["tensor_id"] for h in after["holders"]]
    assert owner["tensor_id"] not in holders and len(holders) == 2
    assert after["storage_bytes"] == 8000 and after["use_count"] == 2

    # The census records the owner again, now on another (empty) storage.
    moved = [r for r in t.of("tensor", tensor_id=owner["tensor_id"]) if r["storage_id"] != old_storage]
    assert moved and moved[-1]["storage_bytes"] == 0 and moved[-1]["sizes"] == [0]
    census_seqs = [c["seq"] for c in t.of("census", census_id=second)]
    assert census_seqs[0] < moved[-1]["seq"] < census_seqs[1]


DEATHS = """
import time
import torch
import memlife

base = torch.zeros(100000)
v = base[:1]
other = torch.ones(1000)
del other  # dies with its storage: the free says it, no death record
del base  # lives on only as v's `_base`
time.sleep(0.3)
memlife.mark("after-base")
a = torch.zeros(200000)
alias = torch.empty(0).set_(a.untyped_storage(), 0, (1,))
del a  # its TensorImpl is destroyed; alias keeps the storage
time.sleep(0.3)
memlife.mark("after-alias")
print(float(v.sum() + alias.sum()))
"""


def test_deaths_are_recorded_when_they_happen(tmp_path):
    # Issue 13 item 3: the sweeper writes an owner's death within its
    # interval (50 ms), with no census, step or free to wait for.
    proc, traces = run_script(tmp_path, DEATHS)
    assert proc.returncode == 0, proc.stderr
    (t,) = traces

    def tensor_of(nbytes):
        alloc = next(x for x in t.of("alloc") if x["bytes"] == nbytes)
        return next(r for r in t.of("tensor") if r["data_address"] == alloc["address"])

    base, a, other = tensor_of(400000), tensor_of(800000), tensor_of(4000)
    after_base = t.one("mark", label="after-base")["seq"]
    after_alias = t.one("mark", label="after-alias")["seq"]
    released = [(d["seq"], i) for d in t.of("tensor_death", how="only_views_base") for i in d["tensor_ids"]]
    destroyed = [(d["seq"], i) for d in t.of("tensor_death", how="destroyed") for i in d["tensor_ids"]]
    assert [s for s, i in released if i == base["tensor_id"]] and \
        all(s < after_base for s, i in released if i == base["tensor_id"]), released
    assert len([1 for s, i in released if i == base["tensor_id"]]) == 1
    (seq_a,) = [s for s, i in destroyed if i == a["tensor_id"]]
    assert after_base < seq_a < after_alias
    assert other["tensor_id"] not in [i for _, i in released + destroyed]


def test_no_sweeper_when_its_interval_is_zero(tmp_path, monkeypatch):
    # MEMLIFE_SWEEP_MS=0 (bench/recorder/sweep_cost.py's baseline): no
    # sweeper thread, so the base let go by Python is not written while the
    # program sleeps; the census at exit still finds it.
    monkeypatch.setenv("MEMLIFE_SWEEP_MS", "0")
    proc, traces = run_script(tmp_path, DEATHS)
    assert proc.returncode == 0, proc.stderr
    (t,) = traces
    alloc = next(x for x in t.of("alloc") if x["bytes"] == 400000)
    base = next(r for r in t.of("tensor") if r["data_address"] == alloc["address"])
    after_alias = t.one("mark", label="after-alias")["seq"]
    released = [d["seq"] for d in t.of("tensor_death", how="only_views_base")
                if base["tensor_id"] in d["tensor_ids"]]
    assert released and all(s > after_alias for s in released), released


KEEPS_NOTHING_ALIVE = """
import time, weakref
import torch
import memlife

scales = torch.full((512,), 0.5, dtype=torch.double)  # the first 4 KiB allocation
zero_points = torch.zeros(512, dtype=torch.long)
q = torch.quantize_per_channel(torch.randn(512, 16), scales, zero_points, 0, torch.qint8)
print(float(q.dequantize().sum()))
scales_alive = weakref.ref(scales)
del q, scales, zero_points
time.sleep(0.5)
print("SCALES_ALIVE", scales_alive() is not None)
memlife.mark("dropped")
"""


def test_the_recorder_keeps_no_dead_tensor_alive(tmp_path):
    # A dead TensorImpl the identity tables still hold weakly releases its
    # storage, but a subclass frees its own members only when deleted: a
    # per-channel quantized tensor's scales lived on under memlife (the
    # qat_fx_prepare corpus program's false leaked_by_block). The sweeper
    # lets dead entries go, and the free that follows, on memlife's own
    # thread, is recorded.
    proc, traces = run_script(tmp_path, KEEPS_NOTHING_ALIVE)
    assert proc.returncode == 0, proc.stderr
    assert "SCALES_ALIVE False" in proc.stdout, proc.stdout
    (t,) = traces
    dropped = t.one("mark", label="dropped")["seq"]
    scales = next(a for a in t.of("alloc") if a["bytes"] == 512 * 8)
    frees = [f["seq"] for f in t.of("free") if f["address"] == scales["address"] and f["seq"] > scales["seq"]]
    assert frees and frees[0] < dropped, (frees, dropped)
