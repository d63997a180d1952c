"""Runs a Python script under `memlife run` and reads its traces back."""

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
PYTHON_DIR = pathlib.Path(os.environ.get("MEMLIFE_PYTHON_DIR", REPO / "python"))


def _memlife_bin():
    path = os.environ.get("MEMLIFE_BIN") or str(REPO / "build-torch" / "bin" / "memlife")
    if not os.path.exists(path):
        pytest.skip(f"memlife CLI not built ({path})")
    return path


class Trace:
    def __init__(self, path, records):
        self.path = path
        self.records = records
        self.summary = next((r for r in records if r["type"] == "summary"), {})

    def of(self, kind, **match):
        return [r for r in self.records if r["type"] == kind and all(r.get(k) == v for k, v in match.items())]

    def censuses(self, **match):
        """The begin records of the censuses, whole or of changes."""
        return [c for c in self.of("census", **match) if c["phase"] != "end"]

    def census_storages(self, census_id):
        """The storages census `census_id` lists once the changes it lists are
        applied to the censuses before it (trace_format.h, kCensus)."""
        listed = {}
        for census in self.censuses():
            if census["phase"] == "begin":
                listed = {}
            for s in self.of("census_storage", census_id=census["census_id"]):
                if s["holders"]:
                    listed[s["storage_id"]] = s
                else:
                    listed.pop(s["storage_id"], None)
            if census["census_id"] == census_id:
                return list(listed.values())
        raise KeyError(f"no census {census_id}")

    def one(self, kind, **match):
        found = self.of(kind, **match)
        assert len(found) == 1, f"expected one {kind} {match}, got {len(found)}"
        return found[0]


def read_trace(path):
    out = subprocess.run([_memlife_bin(), "dump", "--format", "jsonl", str(path)],
                         check=True, capture_output=True, text=True).stdout
    return Trace(path, [json.loads(line) for line in out.splitlines() if line.strip()])


def run_python(tmp_path, python_args, args=(), timeout=300, python_path=True, extra_path=()):
    """Returns (completed process, [Trace]) for `python3 PYTHON_ARGS` run
    under `memlife run ARGS`. python_path=False leaves PYTHONPATH to
    `memlife run` (its own hooks); extra_path goes after memlife's."""
    out_dir = tmp_path / "traces"
    env = dict(os.environ)
    if python_path:
        env["PYTHONPATH"] = os.pathsep.join([str(PYTHON_DIR), *map(str, extra_path),
                                             env.get("PYTHONPATH", "")])
    else:
        env.pop("PYTHONPATH", None)
    proc = subprocess.run([_memlife_bin(), "run", "-o", str(out_dir), *args, "--", sys.executable,
                           *python_args], capture_output=True, text=True, timeout=timeout, env=env)
    traces = [read_trace(p) for p in sorted(out_dir.glob("*.mltrace"))]
    return proc, traces


def run_script(tmp_path, source, args=(), timeout=300, python_path=True):
    """Returns (completed process, [Trace]) for `source` run under memlife.
    python_path=False leaves PYTHONPATH to `memlife run` (its own hooks)."""
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(source))
    return run_python(tmp_path, [str(script)], args, timeout, python_path)


def analyze(path, tmp_path):
    """The report of `memlife analyze` on a trace or a folder of traces."""
    report = tmp_path / "report.json"
    subprocess.run([_memlife_bin(), "analyze", str(path), "-o", str(report)], check=True,
                   capture_output=True, timeout=120)
    return json.loads(report.read_text())


def line_of(source, marker):
    for number, line in enumerate(textwrap.dedent(source).splitlines(), start=1):
        if marker in line:
            return number
    raise AssertionError(marker)
