# End-to-end tests of `memlife export` and `memlife report`: the snapshot
# export is loaded with torch's own memory_viz helpers, the Perfetto export
# is checked event by event, and the HTML report is rendered in headless
# Chromium and checked through its DOM. Counts come from `memlife dump`,
# which reads the trace independently of the views.
import collections
import html.parser
import json
import os
import pickle
import shutil
import subprocess
import sys

import pytest

SCRIPT_FILE = "/tmp/<script>alert(1)</script>.py"
SYNTHETIC_PID = 4242


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)
    assert p.returncode == 0, f"{cmd} failed ({p.returncode}): {p.stderr}"
    return p


def dump_records(opts, trace):
    out = run([opts.memlife, "dump", "--format", "jsonl", trace]).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


@pytest.fixture(scope="session")
def synthetic(opts, tmp_path_factory):
    d = tmp_path_factory.mktemp("synthetic")
    trace = str(d / f"testhost-{SYNTHETIC_PID}.mltrace")
    run([opts.make_trace, trace, str(SYNTHETIC_PID)])
    return trace


@pytest.fixture(scope="session")
def real_run(opts, tmp_path_factory):
    """Traces of the leaky CPU training loop, recorded for real."""
    if not opts.lib_dir:
        pytest.skip("no recorder/torch plugin built (--lib-dir)")
    d = tmp_path_factory.mktemp("real")
    env = dict(os.environ, MEMLIFE_LIB_DIR=opts.lib_dir,
               PYTHONPATH=opts.python_dir + os.pathsep + os.environ.get("PYTHONPATH", ""))
    run([opts.memlife, "run", "-o", str(d / "run"), "--", sys.executable, opts.leaky_script, "6"],
        env=env)
    traces = sorted(str(p) for p in (d / "run").glob("*.mltrace"))
    assert len(traces) == 1
    return str(d / "run"), traces[0]


def export_snapshot(opts, trace, out):
    run([opts.memlife, "export", trace, "--format", "torch-snapshot", "-o", str(out)])
    with open(out, "rb") as f:
        return pickle.load(f)


def check_with_memory_viz(snapshot):
    """Every helper of torch.cuda._memory_viz that needs no network."""
    mv = pytest.importorskip("torch.cuda._memory_viz")
    assert "<html" in mv.trace_plot(snapshot).lower()
    assert "<html" in mv.segment_plot(snapshot).lower()
    assert "segments:" in mv.segsum(snapshot)
    assert "entries" in mv.trace(snapshot)
    identity = lambda lines: lines  # skip flamegraph.pl, which is downloaded
    memory_lines = mv.memory(snapshot, format_flamegraph=identity)
    segment_lines = mv.segments(snapshot, format_flamegraph=identity)
    mv.compare(snapshot["segments"], snapshot["segments"], format_flamegraph=identity)
    return memory_lines, segment_lines


def check_segments_tile(snapshot):
    for seg in snapshot["segments"]:
        assert sum(b["size"] for b in seg["blocks"]) == seg["total_size"]
        addr = seg["address"]
        for b in seg["blocks"]:
            assert b["address"] == addr
            assert b["state"] in ("active_allocated", "inactive")
            addr += b["size"]
        active = sum(b["size"] for b in seg["blocks"] if b["state"] == "active_allocated")
        assert seg["allocated_size"] == active


def test_snapshot_of_synthetic_trace(opts, synthetic, tmp_path):
    s = export_snapshot(opts, synthetic, tmp_path / "s.pickle")
    assert s["memlife"]["devices"] == {"0": "cuda:0", "1": "cpu"}
    cuda, cpu = s["device_traces"]
    actions = lambda t: collections.Counter(e["action"] for e in t)
    assert actions(cuda) == {"segment_alloc": 1, "alloc": 5, "free_requested": 4,
                             "free_completed": 4, "oom": 1}
    # CPU allocations are their own segments.
    assert actions(cpu) == {"segment_alloc": 8, "alloc": 8, "free_requested": 4,
                            "free_completed": 4, "segment_free": 4}
    assert [e for e in cuda if e["action"] == "oom"][0]["device_free"] == 1 << 20
    times = [e["time_us"] for e in cuda]
    assert times == sorted(times) and times[0] > 1_700_000_000 * 10**6
    check_segments_tile(s)
    by_device = collections.Counter(seg["device"] for seg in s["segments"])
    assert by_device == {0: 1, 1: 4}  # the CUDA segment, and the 4 leaked CPU buffers
    frames = [f for e in cpu if e["action"] == "alloc" for f in e["frames"]]
    assert SCRIPT_FILE in {f["filename"] for f in frames}
    memory_lines, _ = check_with_memory_viz(s)
    assert "model.py:42:forward" in memory_lines


def test_snapshot_without_cpu(opts, synthetic, tmp_path):
    out = tmp_path / "s.pickle"
    run([opts.memlife, "export", synthetic, "--format", "torch-snapshot", "--no-cpu", "-o", str(out)])
    s = pickle.load(open(out, "rb"))
    assert len(s["device_traces"]) == 1
    assert all(seg["device"] == 0 for seg in s["segments"])


def test_snapshot_of_real_run(opts, real_run, tmp_path):
    _, trace = real_run
    records = dump_records(opts, trace)
    allocs = sum(1 for r in records if r.get("type") == "alloc")
    frees = sum(1 for r in records if r.get("type") == "free")
    assert allocs > 0 and frees > 0
    s = export_snapshot(opts, trace, tmp_path / "real.pickle")
    events = [e for t in s["device_traces"] for e in t]
    assert sum(e["action"] == "alloc" for e in events) == allocs
    assert sum(e["action"] == "free_completed" for e in events) == frees
    check_segments_tile(s)
    live = sum(b["size"] for seg in s["segments"] for b in seg["blocks"]
               if b["state"] == "active_allocated")
    assert live > 0  # the loop leaks
    memory_lines, _ = check_with_memory_viz(s)
    assert "leaky_train.py" in memory_lines


def perfetto(opts, trace, out, report=None):
    cmd = [opts.memlife, "export", trace, "--format", "perfetto", "-o", str(out)]
    if report:
        cmd += ["--report", str(report)]
    run(cmd)
    with open(out) as f:
        return json.load(f)["traceEvents"]


def synthetic_report(path):
    report = {
        "schema_version": 1,
        "processes": [{"pid": SYNTHETIC_PID, "rank": 0, "path": "testhost-4242.mltrace",
                       "growth_set_aside": [{"why": "bounded", "bytes": 8192, "path": "__main__.buf<deque maxlen=4>[*]",
                                             "reason": "bounded: its container evicts by itself, maxlen=4",
                                             "bound": "maxlen=4", "growth": "grew 8 KiB"}],
                       "still_reachable_at_exit": {"bytes": 65536, "allocations": 1, "top_sites": [
                           {"bytes": 65536, "allocations": 1, "site": SCRIPT_FILE + ":3"}]}}],
        "findings": [
            {"kind": "step_growth", "severity": "error", "bytes": 40960, "count": 4,
             "pid": SYNTHETIC_PID, "rank": 0,
             "message": "grew <img src=x onerror=alert(2)> per step",
             "evidence": {"steps": [2, 3], "stacks": [[
                 {"file": SCRIPT_FILE, "line": 7, "function": "train_step"}]],
                 "stack_roles": ["allocation"]}},
            {"kind": "unwaited_collective", "severity": "error", "bytes": 4096, "count": 1,
             "pid": SYNTHETIC_PID, "rank": 0, "message": "1 x c10d::allreduce_ never waited",
             "evidence": {"steps": [4], "op": "c10d::allreduce_", "group": "default_pg"}},
        ],
    }
    path.write_text(json.dumps(report))
    return report


def test_perfetto_of_synthetic_trace(opts, synthetic, tmp_path):
    report = synthetic_report(tmp_path / "report.json")
    events = perfetto(opts, synthetic, tmp_path / "p.json", tmp_path / "report.json")
    counters = collections.Counter(e["name"] for e in events if e["ph"] == "C")
    assert set(counters) == {"live bytes cpu", "live bytes cuda:0", "reserved bytes cuda:0"}
    live_cpu = [e["args"]["live"] for e in events if e.get("name") == "live bytes cpu"]
    assert max(live_cpu) == 4096 * (1 + 2 + 3 + 4) + 65536
    steps = [e for e in events if e["ph"] == "X" and e["tid"] == 1]
    assert [e["name"] for e in steps] == ["step 1", "step 2", "step 3", "step 4"]
    issues = [e for e in events if e["ph"] == "X" and e["tid"] == 2]
    waits = [e for e in events if e["ph"] == "X" and e["tid"] == 3]
    assert len(issues) == 2 and len(waits) == 1
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    ends = {e["id"]: e for e in events if e["ph"] == "f"}
    assert len(starts) == 1 and starts.keys() == ends.keys()
    for i in starts:
        assert starts[i]["ts"] < ends[i]["ts"]
    instants = [e for e in events if e["ph"] == "i"]
    assert sorted(e["name"] for e in instants) == sorted(f["kind"] for f in report["findings"])
    step_ts = {e["name"]: e["ts"] for e in steps}
    growth = [e for e in instants if e["name"] == "step_growth"][0]
    assert growth["ts"] == step_ts["step 2"]
    names = [e for e in events if e["ph"] == "M" and e["name"] == "process_name"]
    assert names[0]["args"]["name"].startswith("rank 0 pid 4242")


def test_perfetto_of_real_run(opts, real_run, tmp_path):
    _, trace = real_run
    records = dump_records(opts, trace)
    marks = sum(1 for r in records if r.get("kind") == "step")
    events = perfetto(opts, trace, tmp_path / "p.json")
    assert sum(1 for e in events if e["ph"] == "X" and e["tid"] == 1) == marks
    assert any(e["ph"] == "C" and e["name"] == "live bytes cpu" for e in events)


def test_bad_inputs_get_one_line_errors(opts, tmp_path):
    junk = tmp_path / "junk.mltrace"
    junk.write_bytes(b"not a trace at all")
    for cmd in (["export", str(junk), "--format", "perfetto", "-o", str(tmp_path / "x")],
                ["export", str(tmp_path / "missing"), "--format", "torch-snapshot", "-o", "x"],
                ["report", str(junk), "-o", str(tmp_path / "x.html")]):
        p = subprocess.run([opts.memlife] + cmd, capture_output=True, text=True, timeout=60)
        assert p.returncode == 2, p
        assert p.stderr.count("\n") == 1 and "memlife" in p.stderr, p.stderr
    bad = tmp_path / "bad.json"
    bad.write_text('{"findings": 3}')
    p = subprocess.run([opts.memlife, "report", str(bad), "-o", str(tmp_path / "x.html")],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "not a memlife analysis report" in p.stderr


# --- HTML report in headless Chromium ---------------------------------------

class Dom(html.parser.HTMLParser):
    """Elements (tag, attrs) and text of a serialized DOM."""

    def __init__(self, text):
        super().__init__()
        self.elements, self.text = [], []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)

    def count(self, tag, cls=None):
        return sum(1 for t, a in self.elements
                   if t == tag and (cls is None or cls in a.get("class", "").split()))


def chromium(opts):
    exe = opts.chromium or shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        pytest.skip("chromium not installed (apt-get install chromium)")
    return exe


def render(opts, page, tmp_path, screenshot=None):
    exe = chromium(opts)
    base = [exe, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
            f"--user-data-dir={tmp_path / 'chromium-profile'}", "--virtual-time-budget=5000"]
    dom = run(base + ["--dump-dom", f"file://{page}"]).stdout
    if screenshot:
        run(base + [f"--screenshot={screenshot}", "--window-size=1400,1000", f"file://{page}"])
        assert os.path.getsize(screenshot) > 10000
    return Dom(dom)


def save_screenshot_name(opts, name):
    return os.path.join(opts.screenshot_dir, name) if opts.screenshot_dir else None


def embedded_data(page):
    text = open(page, encoding="utf-8").read()
    start = text.index('id="memlife-data">') + len('id="memlife-data">')
    return json.loads(text[start:text.index("</script>", start)])


def test_report_of_synthetic_trace_renders_and_escapes(opts, synthetic, tmp_path):
    report = synthetic_report(tmp_path / "report.json")
    page = tmp_path / "report.html"
    run([opts.memlife, "report", synthetic, "--report", str(tmp_path / "report.json"),
         "-o", str(page)])
    dom = render(opts, page, tmp_path, tmp_path / "synthetic.png")
    assert ("body", {"data-rendered": "true"}) in dom.elements
    assert dom.count("path", "series") == 3  # cpu live, cuda:0 live and reserved
    assert dom.count("line", "step-mark") == 4
    assert dom.count("rect", "finding-band") == len(report["findings"])
    assert dom.count("tr", "finding-row") == len(report["findings"])
    assert dom.count("tr", "site-row") >= 2
    # What is no finding is said: the growth set aside, what is still reachable.
    assert dom.count("tr", "set-aside-row") == 1
    assert dom.count("p", "still-reachable") == 1
    text = "".join(dom.text)
    assert "bounded: its container evicts by itself, maxlen=4" in text
    assert "Still reachable at exit" in text and "64" in text
    # The injection attempts are text, not elements.
    assert dom.count("img") == 0
    assert dom.count("script") == 2  # the data block and the page's own code
    text = "".join(dom.text)
    assert SCRIPT_FILE in text
    assert "<img src=x onerror=alert(2)>" in text


def test_report_from_report_json_finds_traces_beside_it(opts, synthetic, tmp_path):
    folder = os.path.dirname(synthetic)
    report_path = os.path.join(folder, "report.json")
    import pathlib
    synthetic_report(pathlib.Path(report_path))
    page = tmp_path / "r.html"
    run([opts.memlife, "report", report_path, "-o", str(page)])
    data = embedded_data(page)
    assert [p["pid"] for p in data["processes"]] == [SYNTHETIC_PID]
    assert data["processes"][0]["devices"], "the trace beside the report was not read"
    assert len(data["findings"]) == 2


def test_report_of_real_run(opts, real_run, tmp_path):
    run_dir, _ = real_run
    page = tmp_path / "real.html"
    run([opts.memlife, "report", run_dir, "-o", str(page)])
    data = embedded_data(page)
    dom = render(opts, page, tmp_path, save_screenshot_name(opts, "report-cpu-leaky.png"))
    assert ("body", {"data-rendered": "true"}) in dom.elements
    assert dom.count("path", "series") == sum(
        1 + (d["reserved"] is not None) for p in data["processes"] for d in p["devices"])
    assert dom.count("path", "series") >= 1
    assert dom.count("tr", "finding-row") == len(data["findings"])
    assert len(data["findings"]) >= 1  # the loop leaks
    assert dom.count("tr", "site-row") >= 1
    assert "leaky_train.py" in "".join(dom.text)
    # The axis starts where the program's work starts (start-up hidden),
    # live bytes are stacked by the top sites, and a finding's evidence names
    # what holds its memory.
    busiest = data["processes"][0]
    assert 0 < busiest["work_start_ns"] < busiest["end_ns"]
    boxes = [a for t, a in dom.elements if t == "div" and "timeline-box" in a.get("class", "")]
    assert boxes, "no timeline drawn"
    view_start, view_end = (int(v) for v in boxes[0]["data-view"].split(","))
    assert 0 < view_start <= busiest["work_start_ns"] and view_end == busiest["end_ns"]
    assert busiest["stacked_sites"], "no site stacked"
    assert dom.count("path", "site-area") >= 1
    if any(f["evidence"].get("held_by") for f in data["findings"]):
        assert dom.count("ul", "held-by") >= 1
