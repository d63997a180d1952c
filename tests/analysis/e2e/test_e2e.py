# Issue 4 (a)-(d): real CPU PyTorch programs under `memlife run`.
import pytest
from conftest import HERE, _bin, line_of, of_kind, stack_has_line

FAILING = {"residual_view", "unwaited_collective", "use_before_wait", "step_growth", "expect_freed"}


def test_a_residual_view_after_set_data(traced):
    report = traced("registry_views.py", "data")
    found = of_kind(report, "residual_view")
    assert len(found) == 1, report["findings"]
    f = found[0]
    assert f["bytes"] == 12_595_200
    assert f["evidence"]["reachable_bytes"] == 12_000_000
    view_line = line_of("registry_views.py", "VIEW_LINE")
    assert any(stack_has_line(t.get("stack", []), "registry_views.py", view_line)
               for t in f["evidence"]["tensors"]), f["evidence"]["tensors"]


def test_a_storage_resize_releases(traced):
    report = traced("registry_views.py", "resize")
    assert of_kind(report, "residual_view") == []


def test_b_loss_list_grows(traced):
    report = traced("loss_list.py", "keep")
    found = of_kind(report, "step_growth")
    assert found, report["findings"]
    fwd = line_of("loss_list.py", "FORWARD_LINE")
    assert any(stack_has_line(s, "loss_list.py", fwd) for f in found for s in f["evidence"]["stacks"])


def test_b_item_is_steady(traced):
    assert of_kind(traced("loss_list.py", "item"), "step_growth") == []


def test_c_clean_loop_has_no_finding(traced):
    report = traced("clean_loop.py")
    assert [f for f in report["findings"] if f["kind"] in FAILING] == []
    assert report["findings"] == [], [f["message"] for f in report["findings"]]


def test_d_gloo_unwaited(traced):
    report = traced("gloo_unwaited.py", "unwaited")
    # Both ranks have it: one finding naming the ranks, each rank's count kept.
    found = of_kind(report, "unwaited_collective")
    assert len(found) == 1, report["findings"]
    f = found[0]
    assert f["ranks"] == [0, 1]
    assert {r["rank"]: r["count"] for r in f["evidence"]["per_rank"]} == {0: 3, 1: 3}
    issue = line_of("gloo_unwaited.py", "ISSUE_LINE")
    assert stack_has_line(f["evidence"]["stacks"][0], "gloo_unwaited.py", issue)


def test_d_gloo_waited(traced):
    assert of_kind(traced("gloo_unwaited.py", "waited"), "unwaited_collective") == []


def test_read_before_wait(traced):
    # A real op reads a functional all_gather's output before wait_tensor:
    # one finding for both iterations, naming the read and the issue. The
    # view(int32) before the wait reads nothing, and gloo's own copy into
    # the output (on its worker thread) is the collective, not a read.
    report = traced("gloo_read_before_wait.py", "early")
    found = of_kind(report, "use_before_wait")
    assert len(found) == 1, report["findings"]
    f = found[0]
    assert f["count"] == 2 and f["bytes"] == 4 * (1 << 16)
    assert f["evidence"]["op"] == "aten::mul"
    use, issue = f["evidence"]["stacks"]
    assert stack_has_line(use, "gloo_read_before_wait.py", line_of("gloo_read_before_wait.py", "READ_LINE"))
    assert stack_has_line(issue, "gloo_read_before_wait.py", line_of("gloo_read_before_wait.py", "ISSUE_LINE"))


def test_read_after_wait(traced):
    assert of_kind(traced("gloo_read_before_wait.py", "after"), "use_before_wait") == []


def test_each_group_keeps_its_own_order(traced):
    # A functional all-reduce on a second group falls before the default
    # group's all-reduce on rank 0 and after it on rank 1: each group's order
    # is the same on both ranks, so no mismatch (the recorder reads the
    # functional op's group_name as the op begins).
    report = traced("gloo_two_groups.py")
    assert report["findings"] == []
    ranks = [p for p in report["processes"] if p.get("rank") is not None]
    assert len(ranks) == 2 and all(p["collectives"] >= 6 for p in ranks), ranks


@pytest.mark.parametrize("mode", ["wait_all", "then"])
def test_waits_through_a_works_future(traced, mode):
    # torch.futures.wait_all and a then() callback wait the work: the reads
    # after them (and the callback's own div_) are no use before wait.
    assert traced("gloo_future_wait.py", mode)["findings"] == []


def test_read_before_the_futures_wait(traced):
    report = traced("gloo_future_wait.py", "early")
    found = of_kind(report, "use_before_wait")
    assert len(found) == 1, report["findings"]
    f = found[0]
    assert f["count"] == 3 and f["bytes"] == 4 * (1 << 14)
    use, issue = f["evidence"]["stacks"]
    assert stack_has_line(use, "gloo_future_wait.py", line_of("gloo_future_wait.py", "READ_LINE"))
    assert stack_has_line(issue, "gloo_future_wait.py", line_of("gloo_future_wait.py", "ISSUE_LINE"))
    assert of_kind(report, "unwaited_collective") == []


def test_future_never_waited(traced):
    report = traced("gloo_future_wait.py", "never")
    found = of_kind(report, "unwaited_collective")
    assert len(found) == 1, report["findings"]
    assert found[0]["count"] == 6


@pytest.mark.parametrize("mode,bound", [("deque", "maxlen=1000"), ("lru", "maxsize=500")])
def test_growth_a_bounded_container_holds_is_no_finding(traced, mode, bound):
    # A replay buffer or a bounded cache still filling: bounded by design.
    # The process entry says what grew and its bound.
    report = traced("bounded_buffer.py", mode)
    assert report["findings"] == []
    (entry,) = report["processes"][0]["growth_set_aside"]
    assert entry["why"] == "bounded" and entry["bound"] == bound and entry["bytes"] >= 20 * 256 * 64 * 4


def one_growth_held_by(report, prog, path):
    """The report's one finding: a step_growth whose first holder is
    `path`, stored at the STORE_LINE of `prog`; nothing set aside."""
    (f,) = report["findings"]
    assert f["kind"] == "step_growth"
    held = f["evidence"]["held_by"][0]
    assert held["path"] == path
    assert held["stored_at"] == [f"{HERE / prog}:{line_of(prog, 'STORE_LINE')}"]
    assert "growth_set_aside" not in report["processes"][0]
    return f


def test_growth_a_plain_list_holds_is_a_leak(traced):
    one_growth_held_by(traced("bounded_buffer.py", "list"), "bounded_buffer.py", "__main__.buffer[*]")


def _test_ops_lib():
    import os
    import pytest
    lib = os.environ.get("MEMLIFE_TEST_OPS_LIB")
    if not lib or not os.path.exists(lib):
        pytest.skip("MEMLIFE_TEST_OPS_LIB not built (no libtorch)")
    return lib


import pytest


@pytest.mark.parametrize("mode,bytes_,reach", [("set_data", 12_595_200, 12_000_000),
                                               ("set_data_exact", 12_000_000, 12_000_000)])
def test_residual_view_of_a_cxx_registry(traced, mode, bytes_, reach):
    # DeepCompile's ZeRO-3 release in C++ (seed 000): the op allocates the
    # padded buffer, keeps it in its registry and returns a view; the
    # release rebinds the registry's tensor. The registry's tensor owns the
    # storage although the view was seen first, so its set_data is the
    # owner letting go: one residual_view of the padded bytes, naming the
    # release line and the view's op.
    report = traced("cxx_registry.py", _test_ops_lib(), mode)
    found = of_kind(report, "residual_view")
    assert len(found) == 1, report["findings"]
    assert [f["kind"] for f in report["findings"]] == ["residual_view"]
    f = found[0]
    assert f["bytes"] == bytes_
    assert f["evidence"]["reachable_bytes"] == reach
    tensors = f["evidence"]["tensors"]
    views = [t for t in tensors if t["role"] == "view"]
    owner = [t for t in tensors if t["role"] == "owner"]
    # Ops inside a custom op are recorded: the view is the aten::view the
    # op made of its buffer, at the Python line that called the op.
    assert [v["op"] for v in views] == ["aten::view"], views
    assert stack_has_line(views[0]["stack"], "cxx_registry.py", line_of("cxx_registry.py", "VIEW_LINE"))
    assert owner and owner[0]["let_go"] == "rebound"
    assert stack_has_line(owner[0]["stack"], "cxx_registry.py", line_of("cxx_registry.py", "RELEASE_LINE"))


def test_cxx_registry_release_that_frees(traced):
    report = traced("cxx_registry.py", _test_ops_lib(), "free")
    assert report["findings"] == [], [f["message"] for f in report["findings"]]


def test_expect_freed_names_the_programs_line_not_memlifes(traced):
    report = traced("expect_freed_cache.py", "keep")
    found = of_kind(report, "expect_freed")
    assert found, report["findings"]
    stacks = [s for f in found for s in f["evidence"]["stacks"]]
    # memlife's own API frame (memlife/__init__.py) never shows: the first
    # frame of the mark's stack is the program's call.
    frames = [fr for s in stacks for fr in s if fr.get("file")]
    assert not [fr for fr in frames if "/memlife/" in fr["file"]], frames
    expect = line_of("expect_freed_cache.py", "EXPECT_LINE")
    assert any(s and s[0].get("file", "").endswith("expect_freed_cache.py") and s[0]["line"] == expect
               for s in stacks), stacks


def test_expect_freed_kept_promise(traced):
    assert of_kind(traced("expect_freed_cache.py", "drop"), "expect_freed") == []


# Issue 13 item 3: the owner's death is recorded when it happens, so a view
# that outlives it is found with no census, step or free to tell.
@pytest.mark.parametrize("mode,line_marker", [("view_exit", "VIEW_LINE"),
                                              ("alias_exit", "ALIAS_LINE")])
def test_owner_death_recorded_without_a_census(traced, mode, line_marker):
    report = traced("owner_death.py", mode)
    assert len(report["findings"]) == 1, [f["message"] for f in report["findings"]]
    (f,) = of_kind(report, "residual_view")
    assert f["bytes"] == 4 << 20  # what the program prints as retained
    assert f["evidence"]["reachable_bytes"] == 64
    owner = next(t for t in f["evidence"]["tensors"] if t["role"] == "owner")
    assert owner["let_go"] == "died"
    assert f["evidence"]["steps"] == []  # no census saw it
    views = [t for t in f["evidence"]["tensors"] if t["role"] == "view"]
    line = line_of("owner_death.py", line_marker)
    assert any(stack_has_line(v["stack"], "owner_death.py", line) for v in views), views
    alloc = f["evidence"]["stacks"][2]
    assert stack_has_line(alloc, "owner_death.py", line_of("owner_death.py", "ALLOC_LINE")) or \
        mode == "alias_exit"


def test_owner_death_then_view_freed_steps_later(traced, monkeypatch):
    monkeypatch.setenv("MEMLIFE_CENSUS_AT_STEPS", "0")
    report = traced("owner_death.py", "view_steps")
    assert len(report["findings"]) == 1, [f["message"] for f in report["findings"]]
    (f,) = of_kind(report, "residual_view")
    assert f["bytes"] == 4 << 20 and f["evidence"]["steps"] == []
    # Dropped after step 3's mark; the death is seen within 50 ms of the
    # owner's end, before or just after the first mark.
    assert f["evidence"]["retained_steps"] >= 2
    assert f["evidence"]["storage"]["freed"] is True


@pytest.mark.parametrize("mode", ["temp_view", "full_view"])
def test_owner_death_clean_counterparts(traced, mode):
    report = traced("owner_death.py", mode)
    assert report["findings"] == [], [f["message"] for f in report["findings"]]


@pytest.mark.parametrize("mode", ["keep", "release"])
def test_cxx_registry_named_as_the_holder(tmp_path, mode):
    # What an extension's C++ registry keeps, no Python reference reaching
    # it: the block's leak names the custom op whose tensor holds it.
    import json
    import os
    import subprocess
    import sys
    env = dict(os.environ, MEMLIFE_BIN=_bin("MEMLIFE_BIN"), OMP_NUM_THREADS="1",
               PYTHONPATH=str(HERE.parents[2] / "python"))
    for name in ("LD_PRELOAD", "MEMLIFE_OUTPUT_DIR"):
        env.pop(name, None)
    proc = subprocess.run([sys.executable, str(HERE / "registry_block.py"), _test_ops_lib(), mode],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    result = json.loads(proc.stdout.splitlines()[-1])
    assert result["warnings"] == [], result["warnings"]
    if mode == "release":
        assert result["findings"] == [], [f["message"] for f in result["findings"]]
        return
    (f,) = result["findings"]
    assert f["kind"] == "leaked_by_block" and f["bytes"] == 1_240_000, f["message"]
    assert f["message"].endswith("; held in C++ by a tensor made inside memlife_test::gather"), f["message"]
    held = f["evidence"]["held_in_cxx"]
    assert held and held[0]["made_in_op"] == "memlife_test::gather", held
    assert stack_has_line(held[0]["stack"], "registry_block.py", line_of("registry_block.py", "GATHER_LINE"))


@pytest.mark.parametrize("mode", ["keep", "release"])
def test_cxx_registry_growth_names_the_op(traced, mode):
    # Growth that only an extension's C++ registry holds: step_growth names
    # the custom op whose tensors hold it and where Python called it.
    report = traced("registry_growth.py", _test_ops_lib(), mode)
    if mode == "release":
        assert report["findings"] == [], [f["message"] for f in report["findings"]]
        return
    (f,) = report["findings"]
    assert f["kind"] == "step_growth", f["message"]
    assert "held_by" not in f["evidence"], f["evidence"]["held_by"]
    assert f["message"].endswith("; held in C++ by a tensor made inside memlife_test::gather"), f["message"]
    held = f["evidence"]["held_in_cxx"]
    assert held and {h["made_in_op"] for h in held} == {"memlife_test::gather"}, held
    assert stack_has_line(held[0]["stack"], "registry_growth.py", line_of("registry_growth.py", "GATHER_LINE"))


def test_a_cycle_through_tensor_hooks_is_leaked_at_exit(traced, tmp_path):
    # Memory no root reaches at exit that a reference cycle through C++
    # keeps (the optimizer-in-backward tutorial's hooks, one model per
    # trial of a sweep): after a collection nothing can reach or free it,
    # as LeakSanitizer means a leak. One finding for all trials, the bytes
    # the program counts, the cycle named; removing the hooks: none.
    kept_file = tmp_path / "kept"
    report = traced("hook_cycle_sweep.py", "leak", str(kept_file))
    (f,) = report["findings"]
    assert f["kind"] == "leaked_at_exit" and f["evidence"]["memory"] == "uncollectable_cycle", f
    assert f["bytes"] == int(kept_file.read_text()) and f["count"] == 4 * 16, f
    assert f["message"].endswith(
        "unreachable at exit; held by a reference cycle that gc.collect() could not free (one of "
        "its references is held in C++, where the collector cannot see it): "
        "Parameter._post_accumulate_grad_hooks[*]<function step_in_backward>.optimizers.keys()"), f
    state_line = line_of("hook_cycle_sweep.py", "STATE_LINE")
    assert any(stack_has_line(s, "hook_cycle_sweep.py", state_line) for s in f["evidence"]["stacks"])
    assert traced("hook_cycle_sweep.py", "fixed", str(kept_file))["findings"] == []


def test_growth_a_torchscript_attribute_holds_names_it(traced):
    # The module's List[Tensor] attribute is held in C++: the walk reads it
    # through the module's concrete type and names it like a Python list.
    report = traced("script_module_history.py", "keep")
    (f,) = report["findings"]
    assert f["kind"] == "step_growth"
    assert f["evidence"]["bytes_per_step"] == 64 * 256 * 4
    assert stack_has_line(f["evidence"]["stacks"][0], "script_module_history.py",
                          line_of("script_module_history.py", "FORWARD_LINE"))
    (held,) = f["evidence"]["held_by"]
    assert held["path"] == "main().scorer.history[*]"
    assert held["stored_at"] == [
        f"{HERE / 'script_module_history.py'}:{line_of('script_module_history.py', 'STORE_LINE')}"]


def test_a_torchscript_attribute_emptied_each_step_is_clean(traced):
    assert traced("script_module_history.py", "reset")["findings"] == []


def test_growth_held_by_completed_futures_names_their_values(traced):
    # A completed Future keeps its value in C++: the walk asks it for its
    # value, so the holder is named, not left to holder_search.
    f = one_growth_held_by(traced("kept_futures.py", "list"), "kept_futures.py",
                           "__main__.results[*].value()")
    assert "holder_search" not in f["evidence"]
    assert f["evidence"]["bytes_per_step"] == 64 * 256 * 4


def test_futures_in_a_bounded_deque_are_no_finding(traced):
    report = traced("kept_futures.py", "bounded")
    assert report["findings"] == []


def test_cyclic_garbage_with_the_collector_off_is_set_aside(traced):
    # torchtitan's way: gc.disable() and a gc.collect() every gc_freq steps.
    # Garbage on cycles waits for that collection; memlife's own collection
    # at exit frees it: unreachable, no leak. The process entry says so.
    report = traced("gc_disabled_cycles.py", "garbage")
    assert report["findings"] == []
    (entry,) = report["processes"][0]["growth_set_aside"]
    assert entry["why"] == "cyclic_garbage" and entry["bytes"] >= 16 * 64 * 256 * 4


def test_outputs_kept_in_a_list_with_the_collector_off_are_a_leak(traced):
    one_growth_held_by(traced("gc_disabled_cycles.py", "kept"), "gc_disabled_cycles.py",
                       "__main__.kept[*]")
