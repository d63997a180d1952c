"""pytest plugin: ``@pytest.mark.memlife_no_leaks`` fails a test that leaks.

Two ways to record a marked test:

- By default it runs again in a child pytest under ``memlife run`` (only
  that test: its node id), then ``memlife analyze`` reads the child's traces
  and the test fails with one line per error finding (residual views,
  unwaited collectives, ...). It sees everything the recorder sees from the
  child's start (so the test's imports, fixtures and collection too); not
  state the test shares with the parent process (session fixtures are set
  up again in the child).
- ``@pytest.mark.memlife_no_leaks(in_process=True)``, or every marked test
  with ``--memlife-in-process``: the test's call runs inside
  ``memlife.record()`` in this process (no second run). It also fails on
  memory the test made and still holds when it returns (``leaked_by_block``:
  a module-level list, a cache, a hook); it does not see what was allocated
  before the recorder was first loaded, NCCL or raw CUDA calls, or child
  processes (see memlife._record).

The rest of the session runs as usual, unrecorded. Load it with
``-p memlife.pytest_plugin`` (a pip install registers it by itself). The
``memlife`` command is ``$MEMLIFE_BIN``, else ``memlife`` on PATH, else
``<sys.prefix>/bin/memlife``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import pytest

import memlife

MARK = "memlife_no_leaks"


def pytest_addoption(parser):
    parser.addoption("--memlife-in-process", action="store_true",
                     help=f"record @{MARK} tests in this process (memlife.record()) instead of "
                          "running each again under `memlife run`")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", f"{MARK}(in_process=False): run this test again under `memlife run` (or, "
                   "in_process, inside memlife.record()) and fail on error findings")


def _memlife():
    found = memlife.command()
    if found is None:
        pytest.fail("memlife_no_leaks: no memlife command (set MEMLIFE_BIN or put memlife on PATH)",
                    pytrace=False)
    return found


def _in_process(item):
    marker = item.get_closest_marker(MARK)
    return marker is not None and (marker.kwargs.get("in_process", False)
                                   or item.config.getoption("memlife_in_process"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    """In-process: the test's call inside one memlife.record() block (the
    call only: fixtures are set up before and torn down after it)."""
    if not _in_process(item):
        yield
        return
    recording = memlife.record()
    with recording:
        outcome = yield
        # A failing test keeps its frames in the traceback: not judged.
        recording.analyze = outcome.excinfo is None
    if recording.analyze:
        errors = recording.errors
        if errors:
            outcome.force_exception(pytest.fail.Exception(
                f"{MARK}: {len(errors)} finding(s) under memlife.record():\n  "
                + "\n  ".join(errors), pytrace=False))


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    recorded_child = os.environ.get("MEMLIFE_OUTPUT_DIR") and not memlife._record.attached()
    if pyfuncitem.get_closest_marker(MARK) is None or recorded_child or _in_process(pyfuncitem):
        return None  # unmarked, in-process, or already the recorded child: run it here
    memlife_bin = _memlife()
    rootdir = str(pyfuncitem.config.rootpath)
    with tempfile.TemporaryDirectory(prefix="memlife-pytest-") as tmp:
        traces = os.path.join(tmp, "traces")
        child = subprocess.run(
            [memlife_bin, "run", "-o", traces, "--", sys.executable, "-m", "pytest", "-q",
             "-p", "no:cacheprovider", "--rootdir", rootdir, pyfuncitem.nodeid],
            cwd=rootdir, capture_output=True, text=True)
        if child.returncode != 0:
            pytest.fail(f"{MARK}: the recorded run of {pyfuncitem.nodeid} failed "
                        f"(exit {child.returncode}):\n{child.stdout[-3000:]}{child.stderr[-3000:]}",
                        pytrace=False)
        report_path = os.path.join(tmp, "report.json")
        analyzed = subprocess.run([memlife_bin, "analyze", traces, "-o", report_path],
                                  capture_output=True, text=True)
        if analyzed.returncode != 0:
            pytest.fail(f"{MARK}: memlife analyze failed: {analyzed.stderr[-3000:]}", pytrace=False)
        with open(report_path) as f:
            report = json.load(f)
    errors = [f for f in report.get("findings", []) if f.get("severity") == "error"]
    if errors:
        lines = "\n".join(f"  {f['kind']}: {f['message']}" for f in errors)
        pytest.fail(f"{MARK}: {len(errors)} finding(s) under memlife:\n{lines}", pytrace=False)
    return True
