"""``memlife.record()``: records a block of code inside the running process.

The first block of a process that is not under ``memlife run`` loads the
recorder library into it (the environment ``memlife run`` would give the
process comes from ``memlife run --print-environment``) and attaches it to
the torch already loaded. Recording then goes on until the process exits;
each block only writes two marks around its code, and ``memlife analyze
--block N`` judges what happened between them: memory the block made and
still holds at its end (``leaked_by_block``), views that outlived their
owner, collectives never waited, reads before a wait.

What a block cannot see, unlike ``memlife run`` from the process start:
allocations made before the recorder was loaded (their views and frees are
seen, their births are not), NCCL calls and raw cudaMalloc (interposed at
process start only), and child processes (they are not recorded).
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile

import memlife

# The labels of the marks around block N: MEMLIFE_BLOCK_BEGIN_PREFIX and
# MEMLIFE_BLOCK_END_PREFIX of include/memlife/memlife.h (a test compares).
BLOCK_BEGIN_PREFIX = "memlife.record begin "
BLOCK_END_PREFIX = "memlife.record end "

_blocks = 0  # blocks begun in this process
_attached_dir = None  # where a recorder this module loaded writes


def command():
    """The ``memlife`` command: ``$MEMLIFE_BIN``, else ``memlife`` on PATH,
    else ``<sys.prefix>/bin/memlife`` (a pip install); None when none is."""
    for candidate in (os.environ.get("MEMLIFE_BIN"), shutil.which("memlife"),
                      os.path.join(sys.prefix, "bin", "memlife")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def attached():
    """True when memlife.record() loaded the recorder into this process
    (rather than `memlife run` at its start)."""
    return _attached_dir is not None


def _require_command():
    found = command()
    if found is None:
        raise RuntimeError("memlife.record(): no memlife command (set MEMLIFE_BIN or put memlife "
                           "on PATH)")
    return found


def _attach(output_dir):
    """Loads the recorder into this process; returns the trace folder."""
    global _attached_dir
    if _attached_dir is not None:
        return _attached_dir
    if "torch" not in sys.modules:
        raise RuntimeError("memlife.record(): import torch before the first block (the recorder "
                           "attaches to the torch this process runs)")
    out = output_dir or tempfile.mkdtemp(prefix="memlife-record-")
    # Its messages (building the torch plugin for this torch, once, takes a
    # few minutes and says so) go to this process's stderr.
    printed = subprocess.run(
        [_require_command(), "run", "--print-environment", "-o", out, "--", sys.executable],
        stdout=subprocess.PIPE, text=True)
    if printed.returncode != 0:
        raise RuntimeError("memlife.record(): `memlife run --print-environment` failed "
                           f"(exit {printed.returncode}; its message is above)")
    setup = json.loads(printed.stdout)
    for name, value in setup["environment"].items():
        # This process already runs Python with memlife imported; children
        # it starts are not recorded (no preload in theirs).
        if name not in ("LD_PRELOAD", "PYTHONPATH"):
            os.environ[name] = value
    ctypes.CDLL(setup["preload"], mode=ctypes.RTLD_GLOBAL)
    memlife._api = memlife._Api()  # resolves the C API now that it is loaded
    lib = memlife._api.lib
    if lib is None or not hasattr(lib, "memlife_attach"):
        raise RuntimeError(f"memlife.record(): {setup['preload']} exports no memlife_attach")
    if lib.memlife_attach() < 0:
        raise RuntimeError("memlife.record(): the recorder did not start (see its message above)")
    memlife.install_hooks()
    _attached_dir = setup["output_dir"]
    return _attached_dir


class Recording:
    """One recorded block: ``with memlife.record() as rec: ...``.

    After the block: ``rec.report`` (the ``memlife analyze --block N``
    report), ``rec.findings``, ``rec.errors`` (error findings and the
    report's warnings about an incomplete recording) and
    ``rec.assert_no_leaks()``. ``analyze=False`` skips the analysis (the
    trace is in ``rec.trace``)."""

    def __init__(self, output_dir=None, analyze=True):
        self._output_dir = output_dir
        self.analyze = analyze
        self.block = 0
        self.trace = None
        self.report = None

    def __enter__(self):
        global _blocks
        if not memlife.active():
            _attach(self._output_dir)
        lib = memlife._api.lib
        _blocks += 1
        self.block = _blocks
        self.trace = (lib.memlife_trace_path() or b"").decode()
        memlife._holders.collect()  # what earlier code dropped is not the block's
        memlife._holders.restart_walk_schedule()
        memlife._hand_updates.PROBE.restart()
        lib.memlife_mark((BLOCK_BEGIN_PREFIX + str(self.block)).encode())
        return self

    def __exit__(self, exc_type, exc, tb):
        lib = memlife._api.lib
        # The block's garbage goes first; what survives it is held by
        # something, which the walk names. An exception's traceback holds
        # the block's frames: drop them from this frame before collecting.
        exc = tb = None
        memlife._holders.collect()
        memlife._holders.walk_into(lib, cycles=True)
        lib.memlife_census()
        lib.memlife_mark((BLOCK_END_PREFIX + str(self.block)).encode())
        lib.memlife_flush()
        if self.analyze and exc_type is None:
            self.report = self._analyze_block()
        return False

    def _analyze_block(self):
        fd, path = tempfile.mkstemp(prefix="memlife-block-", suffix=".json")
        os.close(fd)
        try:
            done = subprocess.run([_require_command(), "analyze", self.trace, "--block",
                                   str(self.block), "-o", path], capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(f"memlife analyze failed: {done.stderr.strip()}")
            with open(path) as f:
                return json.load(f)
        finally:
            os.unlink(path)

    @property
    def findings(self):
        return [] if self.report is None else self.report.get("findings", [])

    @property
    def errors(self):
        """Error findings, then the report's warnings (a recording that
        missed something cannot vouch that nothing leaked)."""
        if self.report is None:
            return []
        lines = [f"{f['kind']}: {f['message']}" for f in self.findings
                 if f.get("severity") == "error"]
        lines += [f"incomplete recording: {w}" for w in self.report.get("warnings", [])]
        return lines

    def assert_no_leaks(self):
        errors = self.errors
        if errors:
            raise AssertionError(f"memlife: block {self.block} of {self.trace}:\n  "
                                 + "\n  ".join(errors))


def record(output_dir=None, analyze=True) -> Recording:
    """Records the ``with`` block and analyzes it when it ends (see
    Recording). ``output_dir`` is where the first block of a process has
    its trace written (default: a new temporary folder); under ``memlife
    run`` the run's trace is used."""
    return Recording(output_dir, analyze)
