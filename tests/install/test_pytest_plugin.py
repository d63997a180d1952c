# Issue 14: the pytest plugin (memlife.pytest_plugin) on the example in
# examples/pytest_leaks, each marked test run again under `memlife run` and
# (--memlife-in-process) recorded inside memlife.record(): the leaky test
# fails naming the residual view and its line, the clean test passes.
import os
import pathlib
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

SOURCE = pathlib.Path(os.environ.get("MEMLIFE_SOURCE_DIR", pathlib.Path(__file__).parents[2]))
EXAMPLE = SOURCE / "examples" / "pytest_leaks"


def line_of(marker):
    for n, text in enumerate((EXAMPLE / "test_leaks.py").read_text().splitlines(), 1):
        if marker in text:
            return n
    raise AssertionError(marker)


@pytest.mark.parametrize("mode", [[], ["--memlife-in-process"]], ids=["child", "in_process"])
def test_leaky_fails_clean_passes(tmp_path, mode):
    junit = tmp_path / "junit.xml"
    env = dict(os.environ, PYTHONPATH=str(SOURCE / "python"), OMP_NUM_THREADS="1")
    assert os.environ.get("MEMLIFE_BIN"), "MEMLIFE_BIN must name the memlife to test"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "memlife.pytest_plugin",
                           "-p", "no:cacheprovider", *mode, f"--junitxml={junit}", str(EXAMPLE)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stdout[-4000:] + proc.stderr[-4000:]
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    assert set(cases) == {"test_release_leaks", "test_release_frees"}, cases
    failure = cases["test_release_leaks"].find("failure")
    assert failure is not None, proc.stdout
    text = failure.text or failure.get("message", "")
    assert text.count("residual_view") == 1 and "1 finding(s)" in text, text
    assert f"test_leaks.py:{line_of('LEAK_LINE')}" in text, text
    assert cases["test_release_frees"].find("failure") is None, proc.stdout
    assert cases["test_release_frees"].find("skipped") is None, proc.stdout
