"""Bad input to every reading verb (issue 8): empty files, random bytes, a
newer format version, truncated and bit-flipped traces, malformed reports and
suppression files. Unreadable input: exit 2 and one line on stderr. Damaged
but partly readable traces: the verb reads what it can and says so. Never a
crash."""
import os
import random
import struct
import subprocess
import tempfile
import unittest

import cli_test_args

ARGS = None


def memlife(*args):
    return subprocess.run([ARGS.memlife, *args], capture_output=True, text=True, errors="replace",
                          timeout=120)


def verb_commands(path, out_dir):
    """Each reading verb applied to `path`, writing outputs into out_dir."""
    return {
        "dump": ["dump", "--format", "jsonl", path],
        "analyze": ["analyze", path, "-o", os.path.join(out_dir, "r.json")],
        "check": ["check", path],
        "report": ["report", path, "-o", os.path.join(out_dir, "r.html")],
        "export-snapshot": ["export", path, "--format", "torch-snapshot", "-o",
                            os.path.join(out_dir, "s.pickle")],
        "export-perfetto": ["export", path, "--format", "perfetto", "-o",
                            os.path.join(out_dir, "p.json")],
    }


class BadInputTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.good = os.path.join(cls.tmp.name, "good.mltrace")
        subprocess.run([ARGS.make_trace, cls.good], check=True)
        with open(cls.good, "rb") as f:
            cls.good_bytes = f.read()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def write(self, name, data):
        path = os.path.join(self.tmp.name, name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def assert_refused(self, path, what):
        for verb, cmd in verb_commands(path, self.tmp.name).items():
            with self.subTest(input=what, verb=verb):
                r = memlife(*cmd)
                self.assertEqual(r.returncode, 2, f"{verb} on {what}: {r.stderr}")
                lines = [l for l in r.stderr.splitlines() if l.strip()]
                self.assertEqual(len(lines), 1, f"{verb} on {what}: one line, got {r.stderr!r}")

    def assert_survives(self, path, what):
        for verb, cmd in verb_commands(path, self.tmp.name).items():
            with self.subTest(input=what, verb=verb):
                r = memlife(*cmd)
                self.assertGreaterEqual(r.returncode, 0, f"{verb} crashed on {what}: {r.stderr}")
                self.assertIn(r.returncode, (0, 1, 2), f"{verb} on {what}: {r.stderr}")
                if r.returncode == 2:
                    self.assertEqual(len([l for l in r.stderr.splitlines() if l.strip()]), 1)

    def test_empty_file(self):
        self.assert_refused(self.write("empty.mltrace", b""), "an empty file")

    def test_random_bytes(self):
        rng = random.Random(7)
        self.assert_refused(self.write("random.mltrace", bytes(rng.randrange(256) for _ in range(4096))),
                            "random bytes")

    def test_newer_format_version(self):
        data = bytearray(self.good_bytes)
        struct.pack_into("<I", data, 8, 99)
        path = self.write("newer.mltrace", bytes(data))
        r = memlife("dump", path)
        self.assertEqual(r.returncode, 2)
        self.assertIn("99", r.stderr)
        self.assert_refused(path, "a newer format version")

    def test_truncated_traces(self):
        for cut in (20, len(self.good_bytes) // 3, len(self.good_bytes) // 2, len(self.good_bytes) - 1):
            self.assert_survives(self.write(f"cut{cut}.mltrace", self.good_bytes[:cut]), f"cut at {cut}")

    def test_bit_flipped_traces(self):
        rng = random.Random(11)
        for i in range(6):
            data = bytearray(self.good_bytes)
            at = rng.randrange(16, len(data))
            data[at] ^= 1 << rng.randrange(8)
            self.assert_survives(self.write(f"flip{i}.mltrace", bytes(data)), f"bit flip at {at}")

    def test_malformed_reports(self):
        for name, text in (("notjson.json", "{not json"), ("wrong.json", '{"findings": 3}'),
                           ("empty.json", "")):
            path = self.write(name, text.encode())
            for verb, cmd in (("check", ["check", path]),
                              ("report", ["report", path, "-o", os.path.join(self.tmp.name, "x.html")])):
                with self.subTest(report=name, verb=verb):
                    r = memlife(*cmd)
                    self.assertEqual(r.returncode, 2, r.stderr)
                    self.assertEqual(len([l for l in r.stderr.splitlines() if l.strip()]), 1, r.stderr)

    def test_malformed_suppressions(self):
        report = os.path.join(self.tmp.name, "good-report.json")
        r = memlife("analyze", self.good, "-o", report)
        self.assertIn(r.returncode, (0,), r.stderr)
        for name, text in (("nocolon.supp", "residual_view\n"), ("badkind.supp", "no_such_kind:*\n"),
                           ("binary.supp", "\x00\xff\xfe:\x01\n")):
            path = self.write(name, text.encode("latin-1"))
            with self.subTest(suppressions=name):
                r = memlife("check", report, "--suppressions", path)
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertEqual(len([l for l in r.stderr.splitlines() if l.strip()]), 1, r.stderr)
        r = memlife("check", report, "--suppressions", os.path.join(self.tmp.name, "missing.supp"))
        self.assertEqual(r.returncode, 2)


if __name__ == "__main__":
    ARGS, argv = cli_test_args.parse()
    unittest.main(argv=argv)
