# Issue 14: the installed memlife (a `cmake --install` prefix, or `pip
# install` into a venv) works from outside the checkout: it finds its
# recorder libraries and its Python side from its own location.
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

import pytest

SOURCE = pathlib.Path(os.environ.get("MEMLIFE_SOURCE_DIR", pathlib.Path(__file__).parents[2]))
BUILD = pathlib.Path(os.environ.get("MEMLIFE_BUILD_DIR", SOURCE / "build"))
WORK = pathlib.Path(os.environ.get("MEMLIFE_INSTALL_WORK", BUILD / "tests" / "install" / "work"))


def clean_env(**extra):
    """The environment of a user who never saw the checkout: no override
    of memlife's folders, no PYTHONPATH into the source tree."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "MEMLIFE_LIB_DIR", "MEMLIFE_PYTHON_DIR", "MEMLIFE_BIN",
                        "LD_PRELOAD") and not k.startswith("MEMLIFE_OUTPUT")}
    env["OMP_NUM_THREADS"] = "1"
    env.update(extra)
    return env


def timed(cmd, **kwargs):
    start = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    print(f"[{time.monotonic() - start:.1f}s] {' '.join(map(str, cmd[:4]))} ...")
    return proc


class Installed:
    def __init__(self, memlife, python, root):
        self.memlife = str(memlife)
        self.python = str(python)
        self.root = root  # everything memlife uses must be under here


@pytest.fixture(scope="module")
def prefix():
    """`cmake --install` of this build, then moved: nothing may point back
    to the build tree, the source tree or the first prefix."""
    base = WORK / "prefix"
    shutil.rmtree(base, ignore_errors=True)
    first = base / "first"
    proc = timed(["cmake", "--install", str(BUILD), "--prefix", str(first)])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    moved = base / "moved"
    shutil.move(str(first), str(moved))
    for rel in ("bin/memlife", "lib/libmemlife_preload.so", "lib/libmemlife_torch.so",
                "lib/libmemlife_torch.so.torch-version",
                "share/memlife/python/memlife/__init__.py",
                "share/memlife/python/memlife/autoload/sitecustomize.py"):
        assert (moved / rel).is_file(), rel
    return Installed(moved / "bin" / "memlife", sys.executable, moved)


@pytest.fixture(scope="module")
def pip_venv():
    """`pip install --no-build-isolation` of the checkout into a fresh venv
    that sees the system torch."""
    base = WORK / "pip"
    shutil.rmtree(base, ignore_errors=True)
    venv = base / "venv"
    proc = timed([sys.executable, "-m", "venv", "--system-site-packages", str(venv)])
    assert proc.returncode == 0, proc.stderr
    python = venv / "bin" / "python"
    env = clean_env(PIP_NO_INPUT="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    if shutil.which("ccache"):
        env.setdefault("CMAKE_CXX_COMPILER_LAUNCHER", "ccache")
        env.setdefault("CMAKE_C_COMPILER_LAUNCHER", "ccache")
    # A build folder that survives the test: a second run is incremental.
    build_dir = WORK / "pip-build"
    proc = timed([str(python), "-m", "pip", "install", "--no-build-isolation", "--no-deps",
                  "--config-settings=build-dir=" + str(build_dir), str(SOURCE)],
                 env=env, cwd=base, timeout=2100)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    memlife = venv / "bin" / "memlife"
    assert memlife.is_file()
    for rel in ("lib/libmemlife_preload.so", "lib/libmemlife_torch.so",
                "share/memlife/python/memlife/autoload/sitecustomize.py"):
        assert (venv / rel).is_file(), rel
    # `import memlife` works in the venv, from its site-packages.
    proc = timed([str(python), "-c", "import memlife; print(memlife.__file__)"],
                 cwd=base, env=clean_env())
    assert proc.returncode == 0, proc.stderr
    assert pathlib.Path(proc.stdout.strip()).resolve().is_relative_to(venv.resolve()), proc.stdout
    return Installed(memlife, python, venv)


@pytest.fixture(scope="module")
def pip_wheel(pip_venv):
    """`pip wheel` (incremental: the pip_venv build folder), installed
    into a second fresh venv."""
    base = WORK / "wheel"
    shutil.rmtree(base, ignore_errors=True)
    env = clean_env(PIP_NO_INPUT="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    proc = timed([str(pip_venv.python), "-m", "pip", "wheel", "--no-build-isolation", "--no-deps",
                  "--config-settings=build-dir=" + str(WORK / "pip-build"), "-w",
                  str(base / "dist"), str(SOURCE)], env=env, cwd=WORK, timeout=2100)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    wheels = list((base / "dist").glob("memlife_torch-*.whl"))
    assert len(wheels) == 1, wheels
    venv = base / "venv"
    proc = timed([sys.executable, "-m", "venv", "--system-site-packages", str(venv)])
    assert proc.returncode == 0, proc.stderr
    python = venv / "bin" / "python"
    proc = timed([str(python), "-m", "pip", "install", "--no-deps", str(wheels[0])], env=env,
                 cwd=base, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return Installed(venv / "bin" / "memlife", python, venv)


FLOWS = {"prefix": "prefix", "pip": "pip_venv", "wheel": "pip_wheel"}


@pytest.fixture(params=list(FLOWS))
def installed(request):
    return request.getfixturevalue(FLOWS[request.param])


@pytest.fixture
def outside(tmp_path):
    """A working folder outside the checkout and the build tree."""
    assert not tmp_path.resolve().is_relative_to(SOURCE.resolve())
    return tmp_path


def run_and_analyze(inst, cwd, program_args, label):
    out = cwd / f"traces-{label}"
    run = timed([inst.memlife, "run", "-o", str(out), "--", inst.python, *program_args],
                cwd=cwd, env=clean_env(), timeout=300)
    assert run.returncode == 0, run.stderr[-4000:]
    assert "warning" not in run.stderr, run.stderr
    report_path = cwd / f"report-{label}.json"
    ana = timed([inst.memlife, "analyze", str(out), "-o", str(report_path)],
                cwd=cwd, env=clean_env(), timeout=300)
    assert ana.returncode == 0, ana.stderr[-4000:]
    return json.loads(report_path.read_text())


def test_python_side_is_the_installed_one(installed, outside):
    """The child's `memlife` module and autoload come from the install."""
    script = outside / "where.py"
    script.write_text("import memlife, os\n"
                      "print(memlife.__file__)\n"
                      "print(os.environ['PYTHONPATH'])\n"
                      "print(os.environ['LD_PRELOAD'])\n"
                      "print(os.environ['MEMLIFE_TORCH_PLUGIN'])\n")
    proc = timed([installed.memlife, "run", "-o", str(outside / "t"), "--", installed.python,
                  str(script)], cwd=outside, env=clean_env(), timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split("\n")
    root = installed.root.resolve()
    module, pythonpath, preload, plugin = lines[:4]
    assert pathlib.Path(module).resolve().is_relative_to(root), module
    # Under the install root only: not python/ of the source tree, not the
    # build tree's lib/, not where the prefix was first installed.
    for path in pythonpath.split(":")[:2] + [preload.split(":")[0], plugin]:
        assert pathlib.Path(path).resolve().is_relative_to(root), path


def test_leak_found(installed, outside):
    program = outside / "residual_view.py"
    shutil.copy(SOURCE / "examples" / "residual_view.py", program)
    report = run_and_analyze(installed, outside, [str(program)], "leak")
    found = [f for f in report["findings"] if f["kind"] == "residual_view"]
    assert found, [f["kind"] for f in report["findings"]]
    assert "residual_view.py" in found[0]["message"], found[0]["message"]


def test_spawned_ranks_known(installed, outside):
    """Spawned gloo ranks: each trace knows its rank (the Python side was
    loaded in the spawned processes) and waited collectives are waited."""
    program = outside / "ranks.py"
    shutil.copy(SOURCE / "tests" / "multirank" / "ranks.py", program)
    report = run_and_analyze(installed, outside, [str(program), "spawn", "clean", "2"], "ranks")
    ranked = [p for p in report["processes"] if p["rank"] is not None]
    assert sorted(p["rank"] for p in ranked) == [0, 1], report["processes"]
    assert all(p["world_size"] == 2 for p in ranked), report["processes"]
    unwaited = [f for f in report["findings"] if f["kind"] == "unwaited_collective"]
    assert unwaited == [], [f["message"] for f in unwaited]


def test_pytest_plugin_registered(request, installed, outside):
    """A pip install registers the pytest plugin (its marker is known under
    --strict-markers without -p)."""
    if "prefix" in request.node.name:
        pytest.skip("a cmake --install prefix registers no entry point")
    shutil.copytree(SOURCE / "examples" / "pytest_leaks", outside / "example")
    proc = timed([installed.python, "-m", "pytest", "--co", "-q", "--strict-markers",
                  "-p", "no:cacheprovider", str(outside / "example")],
                 cwd=outside, env=clean_env(), timeout=120)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert "2 tests collected" in proc.stdout, proc.stdout


def test_record_in_process(request, installed, outside):
    """memlife.record() from the install: the recorder it loads into the
    running process is the installed one, and the block's leak is found."""
    script = outside / "block.py"
    script.write_text(
        "import torch, memlife\n"
        "kept = []\n"
        "with memlife.record() as rec:\n"
        "    kept.append(torch.ones(1 << 20))\n"
        "maps = open('/proc/self/maps').read().split()\n"
        "print('PRELOAD', next(p for p in maps if p.endswith('libmemlife_preload.so')))\n"
        "print('FINDINGS', [(f['kind'], f['bytes']) for f in rec.findings])\n")
    env = clean_env()
    if "prefix" in request.node.name:  # no pip: the user puts the module on the path
        env.update(PYTHONPATH=str(installed.root / "share" / "memlife" / "python"),
                   MEMLIFE_BIN=installed.memlife)
    proc = timed([installed.python, str(script)], cwd=outside, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = dict(line.split(" ", 1) for line in proc.stdout.splitlines() if " " in line)
    assert pathlib.Path(out["PRELOAD"]).resolve().is_relative_to(installed.root.resolve()), out
    assert out["FINDINGS"] == "[('leaked_by_block', 4194304)]", out
