"""Issue 16: analyze, check, report and export read the same traces of the
same folder the same way (one input selection, one analyze_run): two runs
of real PyTorch programs, nested in one folder, give the same findings in
every verb, for the newest run by default and for --all-runs."""
import json
import re
import subprocess
import sys

import pytest

from conftest import HERE, _bin


def memlife(*args, ok=(0,)):
    proc = subprocess.run([_bin("MEMLIFE_BIN"), *map(str, args)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode in ok, proc.stderr[-3000:]
    return proc


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    run_bin = _bin("MEMLIFE_RUN_BIN")
    # The older run: a loop keeping its losses (step_growth); the newer,
    # two levels down: a view outliving its owner (residual_view).
    for out, prog, arg in ((root / "old", "loss_list.py", "keep"),
                           (root / "new" / "nested", "owner_death.py", "view_exit")):
        proc = subprocess.run([run_bin, "run", "-o", str(out), "--", sys.executable,
                               str(HERE / prog), arg], capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:]
    return root


def findings_by_verb(root, tmp_path, *run_args):
    out = {}
    memlife("analyze", root, *run_args, "-o", tmp_path / "a.json")
    report = json.loads((tmp_path / "a.json").read_text())
    out["analyze"] = sorted(f["fingerprint"] for f in report["findings"])

    check = memlife("check", root, *run_args, "--fail-on", "none")
    counted = re.search(r"(\d+) finding\(s\)", check.stderr)
    out["check"] = int(counted.group(1))

    memlife("report", root, *run_args, "-o", tmp_path / "r.html")
    page = (tmp_path / "r.html").read_text()
    data = json.loads(re.search(r'"findings":(\[.*?\]),"has_report"', page).group(1))
    out["report"] = sorted(f["fingerprint"] for f in data)

    memlife("export", root, *run_args, "--format", "perfetto", "-o", tmp_path / "p.json")
    events = json.loads((tmp_path / "p.json").read_text())["traceEvents"]
    out["export"] = sorted(e["args"]["fingerprint"] for e in events
                           if e.get("ph") == "i" and "fingerprint" in e.get("args", {}))
    return report, out


def test_newest_run_by_default(two_runs, tmp_path):
    report, got = findings_by_verb(two_runs, tmp_path)
    kinds = {f["kind"] for f in report["findings"]}
    assert kinds == {"residual_view"}, report["findings"]  # the newer, nested run only
    assert any("left out" in w or "run" in w for w in report["warnings"]), report["warnings"]
    assert got["check"] == len(got["analyze"])
    assert got["report"] == got["analyze"]
    assert got["export"] == got["analyze"]


def test_all_runs(two_runs, tmp_path):
    report, got = findings_by_verb(two_runs, tmp_path, "--all-runs")
    kinds = {f["kind"] for f in report["findings"]}
    assert {"residual_view", "step_growth"} <= kinds, report["findings"]
    assert got["check"] == len(got["analyze"])
    assert got["report"] == got["analyze"]
    assert got["export"] == got["analyze"]
