"""Loads memlife's torch-snapshot exports with the memory_viz helpers of the
torch on this machine (the device's 2.11): every helper that needs no
network, and a count check against the alloc events in each snapshot.

    python3 scripts/device/check_snapshot.py SNAPSHOT.pickle...
"""
import json
import pickle
import sys

import torch
from torch.cuda import _memory_viz as mv


def check(path):
    with open(path, "rb") as f:
        snapshot = pickle.load(f)
    identity = lambda lines: lines  # skip flamegraph.pl, which is downloaded
    html = mv.trace_plot(snapshot)
    segment_html = mv.segment_plot(snapshot)
    memory_lines = mv.memory(snapshot, format_flamegraph=identity)
    segment_lines = mv.segments(snapshot, format_flamegraph=identity)
    mv.compare(snapshot["segments"], snapshot["segments"], format_flamegraph=identity)
    summary = mv.segsum(snapshot)
    actions = {}
    for trace in snapshot["device_traces"]:
        for event in trace:
            actions[event["action"]] = actions.get(event["action"], 0) + 1
    return {"snapshot": path, "torch": torch.__version__, "trace_plot_bytes": len(html),
            "segment_plot_bytes": len(segment_html), "memory_lines": len(memory_lines),
            "segment_lines": len(segment_lines), "segsum_chars": len(summary),
            "segments": len(snapshot["segments"]), "actions": actions}


if __name__ == "__main__":
    results = [check(p) for p in sys.argv[1:]]
    print(json.dumps(results, indent=1))
