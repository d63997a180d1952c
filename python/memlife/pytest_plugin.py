"""pytest plugin: ``@pytest.mark.memlife_no_leaks`` fails a test that leaks.

Each marked test runs again in a child pytest under ``memlife run`` (only
that test: its node id), then ``memlife analyze`` reads the child's traces
and the test fails with one line per error finding (residual views,
unwaited collectives, ...). The rest of the session runs in-process as
usual, unrecorded. Load it with ``-p memlife.pytest_plugin`` (a pip
install registers it by itself). The ``memlife`` command is ``$MEMLIFE_BIN``,
else ``memlife`` on PATH, else ``<sys.prefix>/bin/memlife``.

What it sees: everything the recorder sees from the child's start (so the
test's imports, fixtures and collection too): storages, tensors and views,
ops, collectives and their waits. What it does not: state the test shares
with the parent process (session fixtures are set up again in the child),
and memory the parent holds.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

MARK = "memlife_no_leaks"


def pytest_configure(config):
    config.addinivalue_line(
        "markers", f"{MARK}: run this test again under `memlife run` and fail on error findings")


def _memlife():
    for candidate in (os.environ.get("MEMLIFE_BIN"), shutil.which("memlife"),
                      os.path.join(sys.prefix, "bin", "memlife")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    pytest.fail("memlife_no_leaks: no memlife command (set MEMLIFE_BIN or put memlife on PATH)",
                pytrace=False)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    if pyfuncitem.get_closest_marker(MARK) is None or os.environ.get("MEMLIFE_OUTPUT_DIR"):
        return None  # unmarked, or already the recorded child: run it here
    memlife = _memlife()
    rootdir = str(pyfuncitem.config.rootpath)
    with tempfile.TemporaryDirectory(prefix="memlife-pytest-") as tmp:
        traces = os.path.join(tmp, "traces")
        child = subprocess.run(
            [memlife, "run", "-o", traces, "--", sys.executable, "-m", "pytest", "-q",
             "-p", "no:cacheprovider", "--rootdir", rootdir, pyfuncitem.nodeid],
            cwd=rootdir, capture_output=True, text=True)
        if child.returncode != 0:
            pytest.fail(f"{MARK}: the recorded run of {pyfuncitem.nodeid} failed "
                        f"(exit {child.returncode}):\n{child.stdout[-3000:]}{child.stderr[-3000:]}",
                        pytrace=False)
        report_path = os.path.join(tmp, "report.json")
        analyzed = subprocess.run([memlife, "analyze", traces, "-o", report_path],
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
