"""The program corpus as tests: real PyTorch programs under `memlife run`.

Clean programs (tests/corpus/clean, and every leak program's --fixed twin)
must give no finding at any severity. Each leak program
(tests/corpus/leaky, one public bug report each, cited in its header) must
give exactly the one finding its header expects, with the bytes the program
measures itself (within 5 %), the leaking line in the evidence's stacks and
the holder named.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import run_corpus

OUT = Path(os.environ.get("MEMLIFE_CORPUS_OUT") or "/tmp/memlife-corpus-tests")
BYTES_TOLERANCE = 0.05

CLEAN = run_corpus.programs("clean")
LEAKY = run_corpus.programs("leaky")


def _memlife():
    path = run_corpus.default_memlife()
    if not path.exists():
        pytest.skip(f"memlife not built ({path})")
    return path


def _report(prog):
    result = run_corpus.run_one(prog, _memlife(), OUT)
    assert result["exit"] == 0, result.get("run_stderr_tail")
    assert result["analyze_exit"] == 0, result.get("analyze_stderr_tail")
    return result, json.loads(Path(result["report"]).read_text())


def _describe(report):
    return [f"{f['kind']} {f['severity']} {f['bytes']} B: {f['message']}" for f in report["findings"]]


def _marked_lines(path, marker):
    return {n for n, text in enumerate(path.read_text().splitlines(), 1) if marker in text}


def _stack_lines(finding, path):
    lines = set()
    for stack in finding["evidence"].get("stacks", []):
        for frame in stack:
            if frame.get("file") and Path(frame["file"]).name == path.name:
                lines.add(frame.get("line"))
    for tensor in finding["evidence"].get("tensors", []):
        for frame in tensor.get("stack", []):
            if frame.get("file") and Path(frame["file"]).name == path.name:
                lines.add(frame.get("line"))
    return lines



def _shard(names):
    """The names this shard runs: MEMLIFE_CORPUS_SHARD="i/n" (1-based) takes
    every n-th, so ctest runs the clean programs as n tests side by side."""
    spec = os.environ.get("MEMLIFE_CORPUS_SHARD", "1/1")
    index, count = (int(v) for v in spec.split("/"))
    return names[index - 1::count]


CLEAN_CASES = _shard(sorted(CLEAN) + sorted(n for n, p in LEAKY.items() if not p.expect))


@pytest.mark.parametrize("name", CLEAN_CASES)
def test_clean_program_has_no_finding(name):
    prog = CLEAN.get(name) or LEAKY[name]
    _, report = _report(prog)
    assert report["findings"] == [], _describe(report)


@pytest.mark.parametrize("name", sorted(n for n, p in LEAKY.items() if p.expect))
def test_leak_program_gives_its_one_finding(name):
    prog = LEAKY[name]
    result, report = _report(prog)
    findings = report["findings"]
    assert len(findings) == 1, _describe(report)
    f = findings[0]
    assert f["kind"] == prog.expect, _describe(report)
    truth = result["truth"]
    assert truth and truth.get("bytes"), "the program wrote no ground truth"
    # Per rank for collectives: a finding on every rank sums them.
    per_process = f["bytes"] / max(1, len(f.get("ranks") or [0]))
    assert abs(per_process - truth["bytes"]) <= BYTES_TOLERANCE * truth["bytes"], (
        f"memlife {per_process:.0f} B, program measured {truth['bytes']} B: {f['message']}")
    lines = _stack_lines(f, prog.path)
    # LEAK-ALLOC, LEAK-HOLD or LEAK-ISSUE (the collective never waited).
    wanted = _marked_lines(prog.path, "# LEAK-")
    assert lines & wanted, f"no LEAK-* line of {prog.path.name} in {sorted(lines)}"
    # The holder: a Python path to the memory, the views that keep it, or
    # the collective (its Work) and the read.
    ev = f["evidence"]
    assert ev.get("held_by") or ev.get("tensors") or ev.get("op"), ev.keys()
    if f["kind"] == "step_growth":
        # Growth names the line that keeps the memory (the append, the
        # cache) beside the allocation site.
        stored = {int(site.rsplit(":", 1)[1]) for h in ev["held_by"] for site in h.get("stored_at", [])
                  if Path(site.rsplit(":", 1)[0]).name == prog.path.name}
        holds = _marked_lines(prog.path, "# LEAK-HOLD")
        assert stored & holds, f"no LEAK-HOLD line {sorted(holds)} in stored_at {sorted(stored)}"
        # ... and no other line of the program (the fixed branch, which
        # stores x.item() or str(e), keeps nothing).
        assert stored <= holds, f"stored_at {sorted(stored)} names lines beside {sorted(holds)}"
        assert "stored at" in f["message"], f["message"]


def test_programs_inside_record_blocks(tmp_path):
    """Issue 14: the same programs, each inside its own memlife.record()
    block of one process (a leak program's fixed twin right after it), as a
    test suite recording in-process would run them: each clean program has
    no finding and no warning, each leak program its one finding with the
    bytes it measures; no block inherits what an earlier one left."""
    memlife_bin = _memlife()
    # Sharded by source file, so a leak program and its fixed twin stay in
    # one shard, the twin's block right after the leak's.
    paths = _shard(sorted({p.path for p in {**CLEAN, **LEAKY}.values()
                           if p.launcher == run_corpus.PYTHON_LAUNCH}))
    programs = sorted((p for p in {**CLEAN, **LEAKY}.values() if p.path in paths),
                      key=lambda p: p.name)
    listing = [{"name": p.name, "path": str(p.path), "args": list(p.args),
                "truth": str(tmp_path / f"{p.name}.truth.json")} for p in programs]
    (tmp_path / "programs.json").write_text(json.dumps(listing))
    source = Path(__file__).resolve().parents[2]
    env = dict(os.environ, MEMLIFE_BIN=str(memlife_bin), OMP_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join([str(source / "python"),
                                           str(source / "tests" / "corpus" / "leaky")]))
    for name in ("LD_PRELOAD", "MEMLIFE_OUTPUT_DIR"):
        env.pop(name, None)
    proc = subprocess.run([sys.executable, str(Path(__file__).parent / "record_blocks.py"),
                           str(tmp_path / "programs.json")], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-4000:]
    results = {r["name"]: r for r in (json.loads(line.split(" ", 1)[1])
                                      for line in proc.stdout.splitlines()
                                      if line.startswith("MEMLIFE-BLOCK "))}
    assert sorted(results) == [p.name for p in programs], proc.stderr[-4000:]
    for p in programs:
        r = results[p.name]
        described = [f"{f['kind']} {f['bytes']} B: {f['message']}" for f in r["findings"]]
        assert r["warnings"] == [], (p.name, r["warnings"])
        if not p.expect:
            assert r["findings"] == [], (p.name, described)
            continue
        # What outlives a block is judged at its end: the block's "exit".
        expect = "leaked_by_block" if p.expect == "leaked_at_exit" else p.expect
        assert [f["kind"] for f in r["findings"]] == [expect], (p.name, described)
        truth = json.loads((tmp_path / f"{p.name}.truth.json").read_text())["bytes"]
        got = r["findings"][0]["bytes"]
        assert abs(got - truth) <= BYTES_TOLERANCE * truth, (p.name, got, truth)


# Real programs recorded on a CPU machine whose frameworks CI does not
# install (traces/cpu/corpus/NAME), and the growth each must set aside: why,
# and the holder's path.
RECORDED = {
    # `scripts/external/fastai_programs.py tabular` (fastai 2.8.12):
    # tabular_learner, fit_one_cycle(3) with SaveModelCallback and
    # EarlyStoppingCallback. Its Recorder keeps each step's smoothed loss, a
    # detached 0-d tensor, for plot_loss: a step_growth error before.
    "ext_fastai_tabular": [("numbers", "__main__.learn.recorder.losses[*]")],
    # `fastai_programs.py vision 1 train`: one epoch scoring the training set
    # too. An AccumMetric keeps the epoch's predictions, and the Recorder
    # resets it at the next epoch's start: a step_growth error before.
    "ext_fastai_vision_train_metrics": [
        ("bounded", "__main__.learn._metrics<L epoch_length=16>.items[*].preds[*]")],
}


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_recorded_program_has_no_finding(name, tmp_path):
    trace = Path(__file__).resolve().parents[2] / "traces" / "cpu" / "corpus" / name
    out = tmp_path / "report.json"
    proc = subprocess.run([str(_memlife()), "analyze", str(trace), "-o", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    assert report["findings"] == [], _describe(report)
    set_aside = [g for p in report["processes"] for g in p.get("growth_set_aside", [])]
    assert [(g["why"], g["path"]) for g in set_aside] == RECORDED[name], set_aside
