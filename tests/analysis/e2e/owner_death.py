"""An owner dies while a small view keeps its whole storage (issue 13 item 3).

The process ends with os._exit, as multiprocessing workers do: no atexit
census runs, so only the recorded death tells memlife the owner let go.
Modes:
  view_exit    a slice of a dropped tensor lives to the exit (leak: 4 MiB)
  alias_exit   a tensor made with set_() on another's storage (leak: 4 MiB)
  view_steps   the view is dropped two steps later, census at steps off (leak)
  temp_view    the view is dropped before the step ends (clean)
  full_view    the view addresses the whole storage (clean)
"""
import os
import sys
import time

import torch

import memlife

mode = sys.argv[1]
ELEMENTS = 1 << 20  # 4 MiB of float32


def gather():
    padded = torch.zeros(ELEMENTS)  # ALLOC_LINE
    return padded[:16]  # VIEW_LINE


if mode == "view_exit":
    kept = gather()
    print("retained", kept.untyped_storage().nbytes(), flush=True)
elif mode == "alias_exit":
    owner = torch.zeros(ELEMENTS)
    kept = torch.empty(0).set_(owner.untyped_storage(), 0, (16,))  # ALIAS_LINE
    del owner
    print("retained", kept.untyped_storage().nbytes(), flush=True)
elif mode == "view_steps":
    kept = gather()
    for step in range(3):
        memlife.mark_step()
        time.sleep(0.1)
    del kept
elif mode == "temp_view":
    kept = gather()
    time.sleep(0.2)
    total = float(kept.sum())
    del kept
elif mode == "full_view":
    kept = torch.zeros(ELEMENTS).view(1024, 1024)
else:
    raise SystemExit(f"unknown mode {mode}")
time.sleep(0.2)  # longer than the sweep interval
os._exit(0)
