import json
import os
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
PROGRAMS = HERE / "programs"


def memlife_binary():
    path = os.environ.get("MEMLIFE")
    if not path:
        path = str(HERE.parents[1] / "build" / "bin" / "memlife")
    if not os.path.exists(path):
        pytest.fail(f"memlife executable not found at {path}; set MEMLIFE")
    return path


class Memlife:
    def __init__(self, tmp_path):
        self.binary = memlife_binary()
        self.tmp_path = tmp_path

    def run(self, *program_args, out="traces", stacks="python", timeout=180, env=None):
        out_dir = self.tmp_path / out
        cmd = [self.binary, "run", "-o", str(out_dir), "--stacks", stacks, "--", *program_args]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        return proc, out_dir

    def dump(self, trace):
        proc = subprocess.run([self.binary, "dump", "--format", "jsonl", str(trace)],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


@pytest.fixture
def memlife(tmp_path):
    return Memlife(tmp_path)


def python_cmd(program, *args):
    return [sys.executable, str(PROGRAMS / program), *args]
