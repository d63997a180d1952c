# Issue 14: the gate is honest about incomplete recordings. Each case makes a
# real trace of a real torch program under `memlife run`, made incomplete the
# way it happens: the torch plugin disabled, unloadable or built for another
# torch; Python hooks not installed; the process killed; the file cut short; bytes flipped. `memlife
# check` exits 2 with one line naming the cause, and gates on the findings
# (0 or 1, as before) with --accept-incomplete. A complete recording of the
# same program has no warnings and passes.
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest
import torch

from conftest import HERE, _bin

PROGRAM = "clean_loop.py"


def record(tmp_path, prog=PROGRAM, env_extra=None, expect_rc=0, python_flags=()):
    memlife = _bin("MEMLIFE_RUN_BIN")
    out = tmp_path / "traces"
    env = dict(os.environ)
    env.update(env_extra or {})
    proc = subprocess.run([memlife, "run", "-o", str(out), "--", sys.executable, *python_flags,
                           str(HERE / prog)],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == expect_rc, proc.stderr[-4000:]
    traces = sorted(out.glob("*.mltrace"))
    assert len(traces) == 1, proc.stderr[-4000:]
    return traces[0], proc.stderr


def check(path, *args):
    proc = subprocess.run([_bin("MEMLIFE_BIN"), "check", str(path), *args], capture_output=True,
                          text=True, timeout=300)
    return proc.returncode, proc.stderr


def analyze(path):
    proc = subprocess.run([_bin("MEMLIFE_BIN"), "analyze", str(path)], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout)


def assert_gate_names(path, kind, fragment=""):
    rc, err = check(path)
    assert rc == 2, err
    lines = [l for l in err.splitlines() if l.startswith("memlife check: incomplete recording")]
    assert len(lines) == 1, err
    assert lines[0].startswith(f"memlife check: incomplete recording: {kind}: "), lines[0]
    assert fragment in lines[0], lines[0]
    # The report names the same cause in its warnings.
    warnings = analyze(path)["warnings"]
    assert [w for w in warnings if w.startswith(kind + ": ")], warnings
    # Accepted explicitly: gated on the findings as before.
    rc, err = check(path, "--accept-incomplete")
    assert rc in (0, 1), err
    assert "incomplete recording accepted: " + kind in err, err


def real_plugin():
    bin_dir = pathlib.Path(_bin("MEMLIFE_RUN_BIN")).resolve().parent
    lib = bin_dir.parent / "lib" / "libmemlife_torch.so"
    if not lib.exists():
        pytest.skip("this build has no torch plugin")
    return lib


def test_complete_recording_passes(tmp_path):
    real_plugin()
    trace, _ = record(tmp_path)
    assert analyze(trace)["warnings"] == []
    rc, err = check(trace)
    assert rc == 0, err
    assert "incomplete" not in err


def test_plugin_disabled(tmp_path):
    trace, run_err = record(tmp_path, env_extra={"MEMLIFE_TORCH_PLUGIN": ""})
    assert "memlife run: warning: torch plugin disabled" in run_err, run_err
    assert_gate_names(trace, "torch_plugin_not_loaded", "none configured")


def test_plugin_not_loadable(tmp_path):
    bad = tmp_path / "libbroken.so"
    bad.write_bytes(b"not an ELF file\n" * 64)
    (tmp_path / "libbroken.so.torch-version").write_text(torch.__version__ + "\n")
    trace, run_err = record(tmp_path, env_extra={"MEMLIFE_TORCH_PLUGIN": str(bad)})
    assert "memlife: cannot load the torch plugin" in run_err, run_err
    assert_gate_names(trace, "torch_plugin_not_loaded", "cannot load")


def test_plugin_built_for_another_torch(tmp_path):
    other = tmp_path / "libmemlife_torch.so"
    shutil.copy(real_plugin(), other)
    (tmp_path / "libmemlife_torch.so.torch-version").write_text("1.13.0+cu117\n")
    trace, run_err = record(tmp_path, env_extra={"MEMLIFE_TORCH_PLUGIN": str(other)})
    assert "built for torch 1.13.0+cu117" in run_err, run_err
    assert_gate_names(trace, "torch_plugin_not_loaded",
                      f"built for torch 1.13.0+cu117, running torch {torch.__version__}")


def test_plugin_file_missing(tmp_path):
    missing = tmp_path / "nowhere" / "libmemlife_torch.so"
    trace, run_err = record(tmp_path, env_extra={"MEMLIFE_TORCH_PLUGIN": str(missing)})
    assert f"MEMLIFE_TORCH_PLUGIN={missing} is not a file" in run_err, run_err
    assert_gate_names(trace, "torch_plugin_not_loaded")


def test_python_hooks_not_installed(tmp_path):
    real_plugin()
    # -E: Python ignores PYTHONPATH, so memlife's autoload never runs.
    trace, _ = record(tmp_path, python_flags=("-E",))
    assert_gate_names(trace, "python_hooks_not_installed", "PYTHONPATH")


def test_process_killed(tmp_path):
    real_plugin()
    trace, _ = record(tmp_path, prog="killed_after_flush.py", expect_rc=137)
    assert_gate_names(trace, "truncated_trace", "no end record")


def test_file_cut_short(tmp_path):
    real_plugin()
    trace, _ = record(tmp_path)
    data = trace.read_bytes()
    trace.write_bytes(data[: len(data) * 2 // 3])
    assert_gate_names(trace, "truncated_trace")


def test_bytes_flipped(tmp_path):
    real_plugin()
    trace, _ = record(tmp_path)
    data = bytearray(trace.read_bytes())
    middle = len(data) // 2
    for i in range(middle, middle + 16):
        data[i] ^= 0xFF
    trace.write_bytes(bytes(data))
    assert_gate_names(trace, "damaged_trace")


def test_a_rank_without_a_trace(tmp_path):
    # Issue 14: a spawned rank that ran without the recorder is named, not
    # silently left out of the run's checks.
    real_plugin()
    trace, _ = record(tmp_path, prog="scrubbed_rank.py")
    assert_gate_names(trace.parent, "missing_trace", "no trace of rank 1 of 2")
