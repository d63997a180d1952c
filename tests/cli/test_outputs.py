"""Issue 15: what the reading verbs write. No output path may name an input
(item 3); every write is checked, a failure exits 2 and leaves no partial
file (item 6); JSON inputs nest at most 256 deep (item 4); control
characters from traces are escaped on the terminal (item 7); reports are
0600 like traces, and secrets from the traced command line are redacted
unless --keep-secrets (item 8)."""
import json
import os
import stat
import subprocess
import tempfile
import unittest

import cli_test_args

ARGS = None
# ESC (screen clear, window title), BEL, DEL and U+009B (CSI, a C1 control).
HOSTILE = "fwd\x1b[2J\x1b]0;pwned\x07\x7f\x9bx"


def memlife(*args, **kw):
    return subprocess.run([ARGS.memlife, *args], capture_output=True, timeout=120, **kw)


class OutputsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = os.path.join(self.tmp.name, "run")
        os.mkdir(self.dir)
        self.trace = os.path.join(self.dir, "a.mltrace")
        env = dict(os.environ, MAKE_TRACE_FUNCTION=HOSTILE,
                   MAKE_TRACE_ARGS="--lr 0.1 --password=hunter2 --token abc123 "
                                   "HF_TOKEN=hf_xyz AWS_SECRET_ACCESS_KEY=aws42 "
                                   "--api-key=KEY-Q7Z")
        subprocess.run([ARGS.make_trace, self.trace], check=True, env=env)
        with open(self.trace, "rb") as f:
            self.trace_bytes = f.read()

    def tearDown(self):
        self.tmp.cleanup()

    def assert_trace_intact(self):
        with open(self.trace, "rb") as f:
            self.assertEqual(f.read(), self.trace_bytes, "the input trace was changed")

    # item 3
    def test_output_naming_an_input_is_refused(self):
        link = os.path.join(self.tmp.name, "link.mltrace")
        os.symlink(self.trace, link)
        hard = os.path.join(self.tmp.name, "hard.mltrace")
        os.link(self.trace, hard)
        json_report = os.path.join(self.tmp.name, "r.json")
        self.assertEqual(memlife("analyze", self.trace, "-o", json_report).returncode, 0)
        cases = {
            "analyze same": ["analyze", self.trace, "-o", self.trace],
            "analyze symlink": ["analyze", self.trace, "-o", link],
            "analyze hard link": ["analyze", hard, "-o", self.trace],
            "analyze inside folder": ["analyze", self.dir, "-o", self.trace],
            "report": ["report", self.trace, "-o", self.trace],
            "report json": ["report", json_report, "-o", json_report],
            "report folder": ["report", self.dir, "-o", self.trace],
            "export perfetto": ["export", self.trace, "--format", "perfetto", "-o", self.trace],
            "export snapshot": ["export", self.trace, "--format", "torch-snapshot", "-o",
                                self.trace],
            # The made trace states lost records: accepted, so the gate gets to
            # the output.
            "check junit": ["check", self.trace, "--accept-incomplete", "--junit", self.trace],
        }
        for what, cmd in cases.items():
            with self.subTest(what):
                r = memlife(*cmd)
                self.assertEqual(r.returncode, 2, (what, r.stderr))
                self.assertIn(b"refusing", r.stderr)
                self.assert_trace_intact()
        with open(json_report) as f:
            json.load(f)  # still the report

    def test_lost_records_fail_the_gate_with_one_line(self):
        # Issue 14: the made trace's lost record (5 records dropped, as when
        # the recorder could not map buffer memory) makes the recording
        # incomplete: check exits 2 naming it; accepted, it gates on findings.
        r = memlife("check", self.trace)
        self.assertEqual(r.returncode, 2, r.stderr)
        lines = [l for l in r.stderr.decode().splitlines() if "incomplete recording" in l]
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn("incomplete recording: records_lost: 5 records lost", lines[0])
        self.assertNotEqual(memlife("check", self.trace, "--accept-incomplete").returncode, 2)

    def test_analyze_at_a_terminal_writes_the_table_and_a_report_file(self):
        # Issue 16: no screenful of JSON on a terminal; a pipe still gets it.
        import pty
        master, slave = pty.openpty()
        with tempfile.TemporaryDirectory() as cwd:
            r = subprocess.run([ARGS.memlife, "analyze", self.trace], stdout=slave,
                               stderr=subprocess.PIPE, cwd=cwd, timeout=120)
            os.close(slave)
            shown = b""
            while True:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                shown += chunk
            os.close(master)
            self.assertIn(r.returncode, (0,), r.stderr)
            with open(os.path.join(cwd, "memlife-report.json")) as f:
                self.assertIn("findings", json.load(f))
            self.assertIn(b"report written to memlife-report.json", shown)
            self.assertNotIn(b'"schema_version"', shown)
        piped = memlife("analyze", self.trace)
        self.assertIn(b'"schema_version"', piped.stdout)

    # item 6
    def test_failed_writes_exit_2(self):
        if not os.path.exists("/dev/full"):
            self.skipTest("no /dev/full")
        for cmd in (["dump", self.trace], ["dump", "--format", "jsonl", self.trace],
                    ["analyze", self.trace]):
            with self.subTest(cmd[0]), open("/dev/full", "w") as full:
                r = subprocess.run([ARGS.memlife, *cmd], stdout=full, stderr=subprocess.PIPE,
                                   timeout=120)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(b"failed", r.stderr)
        for cmd in (["analyze", self.trace, "-o", "/dev/full"],
                    ["report", self.trace, "-o", "/dev/full"],
                    ["export", self.trace, "--format", "perfetto", "-o", "/dev/full"]):
            with self.subTest(" ".join(cmd[:1] + cmd[2:])):
                r = memlife(*cmd)
                self.assertEqual(r.returncode, 2, r.stderr)

    def test_unwritable_output_leaves_no_file(self):
        # A file system that is full: a 64 KiB tmpfs is not available
        # unprivileged, so a read-only folder stands in for the open failure
        # and RLIMIT_FSIZE for a write that fails midway.
        out = os.path.join(self.tmp.name, "big.html")
        import resource

        def limit():
            resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
            import signal
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        r = subprocess.run([ARGS.memlife, "report", self.trace, "-o", out], capture_output=True,
                           preexec_fn=limit, timeout=120)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertFalse(os.path.exists(out), "a partial report was left behind")
        self.assertEqual([n for n in os.listdir(self.tmp.name) if n.startswith(".")], [],
                         "a temporary file was left behind")

    # item 4
    def test_deeply_nested_json_is_refused(self):
        deep = os.path.join(self.tmp.name, "deep.json")
        with open(deep, "w") as f:
            f.write("[" * 100000 + "]" * 100000)
        out = os.path.join(self.tmp.name, "o.html")
        for cmd in (["report", deep, "-o", out], ["check", deep],
                    ["check", self.trace, "--baseline", deep],
                    ["export", self.trace, "--format", "perfetto", "--report", deep, "-o", out]):
            with self.subTest(cmd[0]):
                r = memlife(*cmd)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(b"nested deeper than 256", r.stderr)
        # Within the limit is still fine for the parser.
        ok = os.path.join(self.tmp.name, "ok.json")
        with open(ok, "w") as f:
            f.write('{"schema_version": 1, "processes": [], "findings": [], "x": ' + "[" * 200 + "]" * 200 + "}")
        self.assertEqual(memlife("check", ok).returncode, 0)

    def test_mutated_report_json_never_crashes_a_verb(self):
        # The issue's "fuzz the readers through analyze and report on JSON
        # inputs": a valid report, mutated at random (seeded), to report,
        # check and export --report: exit 0, 1 (check's gate) or 2, never a
        # signal.
        import random
        rng = random.Random(15)
        good = os.path.join(self.tmp.name, "good.json")
        self.assertEqual(memlife("analyze", self.trace, "-o", good).returncode, 0)
        with open(good, "rb") as f:
            base = f.read()
        pieces = [b"[", b"]", b"{", b"}", b'"', b"\\", b",", b":", b"null", b"1e999", b"-0",
                  b"\xff", b"\x00", b'"\\ud800"', b"[" * 300, b"{\"a\":" * 300]
        bad = os.path.join(self.tmp.name, "bad.json")
        out = os.path.join(self.tmp.name, "fuzz.html")
        for i in range(40):
            data = bytearray(base)
            for _ in range(rng.randint(1, 8)):
                pos = rng.randrange(len(data) + 1)
                op = rng.randrange(3)
                if op == 0 and data:
                    del data[pos:pos + rng.randint(1, 64)]
                elif op == 1:
                    data[pos:pos] = rng.choice(pieces)
                elif data:
                    data[min(pos, len(data) - 1)] ^= 1 << rng.randrange(8)
            with open(bad, "wb") as f:
                f.write(data)
            for cmd in (["report", bad, "-o", out], ["check", bad],
                        ["export", self.trace, "--format", "perfetto", "--report", bad, "-o",
                         out]):
                r = memlife(*cmd)
                self.assertIn(r.returncode, (0, 1, 2), (i, cmd[0], r.returncode, r.stderr[-300:]))

    # item 7
    def test_control_characters_are_escaped_on_the_terminal(self):
        for cmd in (["dump", self.trace], ["dump", "--format", "jsonl", self.trace],
                    ["analyze", self.trace], ["check", self.trace, "--accept-incomplete", "--fail-on", "none"]):
            with self.subTest(" ".join(cmd[:-1])):
                r = memlife(*cmd)
                self.assertIn(r.returncode, (0, 1), r.stderr)
                both = r.stdout + r.stderr
                for bad in (b"\x1b", b"\x07", b"\x7f", b"\xc2\x9b"):
                    self.assertNotIn(bad, both, (cmd, bad))
        r = memlife("dump", self.trace)
        self.assertIn(b"fwd\\x1b[2J\\x1b]0;pwned\\x07\\x7f\\u009bx", r.stdout)

    # item 8
    def test_reports_are_private_and_redacted(self):
        out_json = os.path.join(self.tmp.name, "r.json")
        out_html = os.path.join(self.tmp.name, "r.html")
        os.umask(0o022)
        self.assertEqual(memlife("analyze", self.trace, "-o", out_json).returncode, 0)
        self.assertEqual(memlife("report", self.trace, "-o", out_html).returncode, 0)
        for path in (out_json, out_html):
            self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o600, path)
            with open(path, "rb") as f:
                data = f.read()
            # Each secret is one no temporary folder's random name can hold
            # (`/tmp/tmpfmx93k9e` once held a 2-character one).
            for secret in (b"hunter2", b"abc123", b"hf_xyz", b"aws42", b"KEY-Q7Z"):
                self.assertNotIn(secret, data, (path, secret))
            self.assertIn(b"--lr 0.1", data)
        with open(out_json) as f:
            cmd = json.load(f)["processes"][0]["command_line"]
        self.assertTrue(cmd.endswith("--lr 0.1 --password=*** --token *** HF_TOKEN=*** "
                                     "AWS_SECRET_ACCESS_KEY=*** --api-key=***"), cmd)
        self.assertEqual(memlife("analyze", self.trace, "-o", out_json,
                                 "--keep-secrets").returncode, 0)
        with open(out_json, "rb") as f:
            self.assertIn(b"--password=hunter2", f.read())


if __name__ == "__main__":
    ARGS, rest = cli_test_args.parse()
    unittest.main(argv=rest)
