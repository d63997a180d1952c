"""The recorder must not change what the traced program sees of itself."""

import json

from conftest import run_script

PROFILED_STEPS = """
    import json, sys
    import torch, torch.nn as nn
    from torch.profiler import ProfilerActivity, profile

    model = nn.Linear(32, 32)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    kept = [torch.zeros(1000)]  # a program global: the walk names it
    with profile(activities=[ProfilerActivity.CPU], with_stack=True) as prof:
        for _ in range(3):  # memlife walks the holders after steps 1 and 2
            opt.zero_grad()
            model(torch.randn(8, 32)).sum().backward()
            opt.step()
    names = sorted({e.name for e in prof.events() if "memlife" in e.name})
    json.dump({"memlife_functions": names, "events": len(prof.events())}, open(sys.argv[1], "w"))
"""


def test_the_holder_walk_is_not_in_the_programs_profile(tmp_path):
    # torch.profiler(with_stack=True) traces every Python call of the thread
    # that started it. The walk that names holders after optimizer steps ran
    # on that thread: a profile of a few steps held 500,000 calls of
    # memlife's walk (165 MB of Chrome trace, key_averages() 20 s instead of
    # 0.03 s). It now runs on a thread of its own; the program's profile
    # shows only the optimizer hook that starts it, the one call per
    # backward of the wrapper that marks it, and in the first two passes
    # (until the optimizer's update shows) the probe of _hand_updates.py
    # that gives a loop without an optimizer its steps.
    out = tmp_path / "profile.json"
    proc, traces = run_script(tmp_path, PROFILED_STEPS.replace("sys.argv[1]", repr(str(out))))
    assert proc.returncode == 0, proc.stderr[-3000:]
    profile = json.loads(out.read_text())
    walk_calls = [n for n in profile["memlife_functions"]
                  if not n.endswith(("after_step", "stepped", "walk_into", "_enabled",
                                     "backward_marked_by_memlife"))
                  and "memlife/_hand_updates.py" not in n]
    assert walk_calls == [], profile
    # The walk still ran, off the program's thread: it named the global.
    (trace,) = traces
    holders = [m["label"] for m in trace.of("mark") if m["kind"] == "holder"]
    assert any(label.startswith("__main__.kept[0]") for label in holders), holders
