"""The torch plugin for the torch that actually runs (issue 14).

memlife's plugin only loads into the torch it was built for. Here memlife's
lib folder is copied and its plugin relabelled as built for another torch
(what an upgraded environment looks like to the preload), then:
- `memlife run` of a leaky program builds the plugin for the running torch
  into the cache on first use (one progress line), records with it (the
  leak is found, no incomplete-recording warning), and the second run
  takes it from the cache without building;
- without cmake on PATH it cannot build: one warning says what to run, the
  recording goes on without the plugin and `memlife check` exits 2 naming
  torch_plugin_not_loaded; the preload's own message names
  `memlife build-plugin --python <this python>`;
- `memlife build-plugin` builds for the python it is given, and then says
  the cache already has it.
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

MEMLIFE = os.environ.get("MEMLIFE_BIN", "")
LIB_DIR = os.environ.get("MEMLIFE_LIB_DIR", "")
SOURCE = Path(os.environ.get("MEMLIFE_SOURCE_DIR", Path(__file__).resolve().parents[2]))
LEAKY = SOURCE / "examples" / "residual_view.py"


@pytest.fixture(scope="module")
def other_torch_lib(tmp_path_factory):
    if not (MEMLIFE and LIB_DIR):
        pytest.skip("MEMLIFE_BIN and MEMLIFE_LIB_DIR not set")
    lib = tmp_path_factory.mktemp("lib")
    for name in os.listdir(LIB_DIR):
        src = Path(LIB_DIR) / name
        if src.is_file():
            shutil.copy2(src, lib / name)
    (lib / "libmemlife_torch.so.torch-version").write_text("0.0.0+another\n")
    # Its CUDA tracker would be for that other torch too: not here, so a
    # tracker can only come from beside the plugin built for this torch.
    (lib / "libmemlife_torch_cuda.so").unlink(missing_ok=True)
    return lib


def memlife(args, env, cwd):
    return subprocess.run([MEMLIFE, *args], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=900)


def env_with(lib, cache, **extra):
    env = dict(os.environ, MEMLIFE_LIB_DIR=str(lib), MEMLIFE_CACHE_DIR=str(cache))
    env.pop("MEMLIFE_TORCH_PLUGIN", None)
    env.update(extra)
    return env


def analyze(traces, env, cwd):
    out = memlife(["analyze", str(traces), "-o", "-"], env, cwd)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_run_builds_the_plugin_for_the_running_torch_once(other_torch_lib, tmp_path):
    cache = tmp_path / "cache"
    env = env_with(other_torch_lib, cache)
    first = memlife(["run", "-o", str(tmp_path / "t1"), "--", sys.executable, str(LEAKY)], env,
                    tmp_path)
    assert first.returncode == 0, first.stderr
    building = [l for l in first.stderr.splitlines() if "building the torch plugin" in l]
    assert len(building) == 1, first.stderr
    import torch
    assert f"torch {torch.__version__}" in building[0]
    plugin = cache / "torch-plugin" / torch.__version__ / "libmemlife_torch.so"
    assert plugin.is_file()
    report = analyze(tmp_path / "t1", env, tmp_path)
    assert report["warnings"] == []
    assert [f["kind"] for f in report["findings"]] == ["residual_view"]

    second = memlife(["run", "-o", str(tmp_path / "t2"), "--", sys.executable, str(LEAKY)], env,
                     tmp_path)
    assert second.returncode == 0, second.stderr
    assert "building the torch plugin" not in second.stderr
    assert analyze(tmp_path / "t2", env, tmp_path)["warnings"] == []


def test_without_a_compiler_it_says_what_to_run(other_torch_lib, tmp_path):
    # PATH holds this python and nothing else: no cmake, no compiler.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(sys.executable)
    env = env_with(other_torch_lib, tmp_path / "cache", PATH=str(bin_dir))
    run = memlife(["run", "-o", str(tmp_path / "t"), "--", "python3", str(LEAKY)], env, tmp_path)
    assert run.returncode == 0, run.stderr
    warning = [l for l in run.stderr.splitlines() if l.startswith("memlife run: warning:")]
    assert len(warning) == 1 and "no cmake on PATH" in warning[0], run.stderr
    assert "memlife build-plugin --python" in warning[0]
    assert "Build one for it with: memlife build-plugin --python" in run.stderr
    check = memlife(["check", str(tmp_path / "t")], env, tmp_path)
    assert check.returncode == 2
    assert "torch_plugin_not_loaded" in check.stderr


def test_build_plugin_verb(other_torch_lib, tmp_path):
    env = env_with(other_torch_lib, tmp_path / "cache")
    built = memlife(["build-plugin", "--python", sys.executable], env, tmp_path)
    assert built.returncode == 0, built.stderr
    path = Path(built.stdout.strip())
    assert path.is_file() and path.parent.parent == tmp_path / "cache" / "torch-plugin"
    again = memlife(["build-plugin", "--python", sys.executable], env, tmp_path)
    assert again.returncode == 0 and "already built" in again.stderr
    assert again.stdout.strip() == str(path)


def test_a_process_memlife_cannot_foresee_loads_the_cached_plugin(other_torch_lib, tmp_path):
    # A shell script's python: memlife run cannot tell its torch, so the
    # preload itself takes the plugin built for the running torch from the
    # cache, and the CUDA allocator tracker from beside that plugin.
    env = env_with(other_torch_lib, tmp_path / "cache")
    built = memlife(["build-plugin", "--python", sys.executable], env, tmp_path)
    assert built.returncode == 0, built.stderr
    run = memlife(["run", "-o", str(tmp_path / "t"), "--", "sh", "-c",
                   f"exec {sys.executable} {LEAKY}"], env, tmp_path)
    assert run.returncode == 0, run.stderr
    assert "building the torch plugin" not in run.stderr
    assert "no CUDA allocator tracker" not in run.stderr, run.stderr
    report = analyze(tmp_path / "t", env, tmp_path)
    assert report["warnings"] == []
    assert [f["kind"] for f in report["findings"]] == ["residual_view"]
