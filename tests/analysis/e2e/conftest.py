import json
import os
import pathlib
import subprocess
import sys

import jsonschema
import pytest

HERE = pathlib.Path(__file__).parent
# The report's contract: every report these tests make must follow it.
REPORT_SCHEMA = json.loads((HERE.parents[2] / "lib" / "analysis" / "report.schema.json").read_text())


def _bin(var):
    path = os.environ.get(var) or os.environ.get("MEMLIFE_BIN")
    if not path or not os.path.exists(path):
        pytest.skip(f"{var}/MEMLIFE_BIN not set to a memlife executable")
    return path


@pytest.fixture
def traced(tmp_path):
    """traced(prog, *args) -> report: memlife run, then memlife analyze."""

    def run(prog, *args, timeout=300):
        run_bin = _bin("MEMLIFE_RUN_BIN")
        analyze_bin = _bin("MEMLIFE_BIN")
        out = tmp_path / "traces"
        proc = subprocess.run(
            [run_bin, "run", "-o", str(out), "--", sys.executable, str(HERE / prog), *args],
            capture_output=True, text=True, timeout=timeout)
        assert proc.returncode == 0, proc.stderr[-4000:]
        report_path = tmp_path / "report.json"
        proc = subprocess.run([analyze_bin, "analyze", str(out), "-o", str(report_path)],
                              capture_output=True, text=True, timeout=timeout)
        assert proc.returncode == 0, proc.stderr[-4000:]
        report = json.loads(report_path.read_text())
        jsonschema.validate(report, REPORT_SCHEMA)
        return report

    return run


def line_of(prog, marker):
    for n, text in enumerate((HERE / prog).read_text().splitlines(), 1):
        if marker in text:
            return n
    raise AssertionError(marker)


def of_kind(report, kind):
    return [f for f in report["findings"] if f["kind"] == kind]


def stack_has_line(stack, file_suffix, line):
    return any(f.get("file", "") and f["file"].endswith(file_suffix) and f.get("line") == line
               for f in stack)
