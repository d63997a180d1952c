"""Ways a traced program ends badly. argv[1] picks one."""
import ctypes
import os
import signal
import sys

import torch

keep = [torch.ones(1024, 1024) for _ in range(4)]  # 16 MiB the trace must show
mode = sys.argv[1]
if mode == "sigkill":
    import time

    time.sleep(0.3)  # longer than the recorder's flush interval
    os.kill(os.getpid(), signal.SIGKILL)
elif mode == "segv":
    ctypes.string_at(0)
elif mode == "sigterm":
    # Python reads the handler it found at start-up: the default, as without
    # memlife (the recorder installs its flushing handler after that).
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        sys.exit(3)
    os.kill(os.getpid(), signal.SIGTERM)
    signal.pause()  # another thread may take the signal
elif mode == "os_exit":
    os._exit(7)
elif mode == "raise":
    raise RuntimeError("the program failed")
elif mode == "oom":
    # A memory limit stands in for a machine out of memory.
    import resource

    with open("/proc/self/status") as status:
        vm_kib = next(int(l.split()[1]) for l in status if l.startswith("VmSize:"))
    limit = vm_kib * 1024 + (1 << 30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    hold = []
    while True:
        hold.append(torch.empty(256 << 20, dtype=torch.uint8))
