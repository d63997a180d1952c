# Issue 7: several ranks under `memlife run`, wrapping the launcher.
import json
import os
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).parent
LAUNCHERS = ["torchrun", "spawn"]


def _bin(var):
    path = os.environ.get(var) or os.environ.get("MEMLIFE_BIN")
    if not path or not os.path.exists(path):
        pytest.skip(f"{var}/MEMLIFE_BIN not set to a memlife executable")
    return path


def line_of(marker):
    for n, text in enumerate((HERE / "ranks.py").read_text().splitlines(), 1):
        if marker in text:
            return n
    raise AssertionError(marker)


def run_ranks(tmp_path, launcher, world, mode):
    """memlife run -o DIR -- <launcher> ranks.py, then memlife analyze DIR."""
    out = tmp_path / "traces"
    if launcher == "torchrun":
        cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(world),
               "--master-port", str(29500 + os.getpid() % 1000), str(HERE / "ranks.py"),
               "torchrun", mode]
    else:
        cmd = [sys.executable, str(HERE / "ranks.py"), "spawn", mode, str(world)]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.run([_bin("MEMLIFE_RUN_BIN"), "run", "-o", str(out), "--", *cmd],
                          capture_output=True, text=True, timeout=240, env=env)
    if mode != "mismatch":
        assert proc.returncode == 0, proc.stderr[-4000:]
    report_path = tmp_path / "report.json"
    ana = subprocess.run([_bin("MEMLIFE_BIN"), "analyze", str(out), "-o", str(report_path)],
                         capture_output=True, text=True, timeout=240)
    assert ana.returncode == 0, ana.stderr[-4000:]
    report = json.loads(report_path.read_text())
    ranked = [p for p in report["processes"] if p["rank"] is not None]
    # Every rank's trace knows its rank and the world size.
    assert sorted(p["rank"] for p in ranked) == list(range(world)), report["processes"]
    assert all(p["world_size"] == world for p in ranked), report["processes"]
    return report


def of_kind(report, kind):
    return [f for f in report["findings"] if f["kind"] == kind]


def stack_has_line(stack, line):
    return any(f.get("file", "").endswith("ranks.py") and f.get("line") == line for f in stack)


@pytest.mark.parametrize("world", [2, 4])
@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_unwaited_counted_on_each_rank(tmp_path, launcher, world):
    report = run_ranks(tmp_path, launcher, world, "unwaited")
    found = of_kind(report, "unwaited_collective")
    # The same finding on every rank is reported once, naming the ranks.
    assert len(found) == 1, [f["message"] for f in report["findings"]]
    f = found[0]
    assert f["ranks"] == list(range(world))
    assert sorted(r["rank"] for r in f["evidence"]["per_rank"]) == list(range(world))
    assert all(r["count"] == 3 for r in f["evidence"]["per_rank"]), f["evidence"]["per_rank"]
    assert f["count"] == 3 * world
    assert f["evidence"]["released_by"] == "never"
    assert stack_has_line(f["evidence"]["stacks"][0], line_of("ISSUE_LINE"))
    assert of_kind(report, "collective_mismatch") == []


@pytest.mark.parametrize("world", [2, 4])
@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_skipped_all_reduce_is_a_mismatch_with_both_stacks(tmp_path, launcher, world):
    report = run_ranks(tmp_path, launcher, world, "mismatch")
    found = of_kind(report, "collective_mismatch")
    assert len(found) == 1, [f["message"] for f in report["findings"]]
    f = found[0]
    assert f["evidence"]["group"] == "default"
    # Rank 1's second call is the third all_reduce or the barrier, or never came.
    stacks = f["evidence"]["stacks"]
    assert len(stacks) == 2, f
    assert stack_has_line(stacks[0], line_of("REDUCE_LINE")), stacks[0]
    assert "rank 1" in f["message"], f["message"]
    assert any(stack_has_line(stacks[1], line_of(m)) for m in ("REDUCE_LINE", "BARRIER_LINE"))


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_clean_run_reports_nothing(tmp_path, launcher):
    report = run_ranks(tmp_path, launcher, 2, "clean")
    assert report["findings"] == [], [f["message"] for f in report["findings"]]
