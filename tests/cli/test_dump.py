"""memlife dump on synthetic traces from cli_make_trace: every record kind,
resolved names and stacks, truncated copies, unreadable files."""
import json
import os
import subprocess
import tempfile
import unittest

import cli_test_args

ARGS = None

ALL_KINDS = {
    "process", "thread", "module", "string", "frame", "stack", "alloc", "free",
    "segment_alloc", "segment_free", "tensor", "op", "collective_issue",
    "collective_wait", "mark", "census", "census_storage", "oom", "lost", "end",
}


def dump(path, fmt="jsonl"):
    return subprocess.run([ARGS.memlife, "dump", "--format", fmt, path],
                          capture_output=True, text=True, timeout=60)


def jsonl(stdout):
    return [json.loads(line) for line in stdout.splitlines()]


class DumpTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.trace = os.path.join(cls.tmp.name, "all.mltrace")
        subprocess.run([ARGS.make_trace, cls.trace], check=True)
        with open(cls.trace, "rb") as f:
            cls.trace_bytes = f.read()
        result = dump(cls.trace)
        assert result.returncode == 0, result.stderr
        cls.lines = jsonl(result.stdout)
        cls.records = [r for r in cls.lines if r["type"] not in ("header", "summary")]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def of_type(self, type_name):
        return [r for r in self.records if r["type"] == type_name]

    def test_every_kind_appears_with_common_fields(self):
        self.assertEqual({r["type"] for r in self.records}, ALL_KINDS)
        for r in self.records:
            for key in ("seq", "time_ns", "stream"):
                self.assertIsInstance(r[key], int, r)
        seqs = [r["seq"] for r in self.records]
        self.assertEqual(seqs, sorted(seqs))
        self.assertEqual(len(set(seqs)), len(seqs))
        self.assertEqual({r["stream"] for r in self.records}, {0, 1})

    def test_header_first_summary_last(self):
        header, summary = self.lines[0], self.lines[-1]
        self.assertEqual(header["type"], "header")
        self.assertEqual(header["torch_version"], "2.15.0")
        self.assertEqual(header["run_id"], "make-trace")
        self.assertEqual(summary["type"], "summary")
        self.assertTrue(summary["complete"])
        self.assertFalse(summary["truncated"])
        self.assertEqual(summary["records"], len(self.records))
        self.assertGreater(summary["chunks"], 5)  # 48-byte chunks
        self.assertEqual(summary["file_bytes"], len(self.trace_bytes))

    def test_op_phases_and_names(self):
        ops = self.of_type("op")
        self.assertEqual([o["phase"] for o in ops], ["begin", "end"])
        self.assertEqual(ops[0]["name"], "aten::add")
        self.assertEqual(ops[0]["name_string"], 3)
        self.assertEqual(ops[1]["outputs"], [1, 2])
        self.assertEqual(ops[0]["op_id"], ops[1]["op_id"])

    def test_strings_resolved_next_to_ids(self):
        alloc = self.of_type("alloc")[0]
        self.assertEqual(alloc["op"], "aten::add")
        self.assertEqual(alloc["bytes"], 4096)
        self.assertEqual(alloc["device"], -1)
        tensors = self.of_type("tensor")
        self.assertEqual([t["dtype"] for t in tensors], ["float32", "float32"])
        issue = self.of_type("collective_issue")[0]
        self.assertEqual((issue["op"], issue["group"], issue["backend"]),
                         ("c10d::allreduce_", "default_pg", "gloo"))
        self.assertTrue(issue["async"])
        self.assertEqual(self.of_type("collective_wait")[0]["how"], "work_wait")
        marks = self.of_type("mark")
        self.assertEqual([m["kind"] for m in marks], ["step", "expect_freed"])
        self.assertEqual(marks[0]["label"], "epoch-1")
        frame = self.of_type("frame")[0]
        self.assertEqual((frame["file"], frame["function"], frame["line"]),
                         ("train.py", "step", 42))

    def test_view_fields(self):
        base, view = self.of_type("tensor")
        self.assertFalse(base["is_view"])
        self.assertTrue(view["is_view"])
        self.assertTrue(view["aliases"])
        self.assertEqual(view["base_tensor_id"], base["tensor_id"])
        self.assertEqual(view["storage_id"], base["storage_id"])
        self.assertEqual(view["sizes"], [32])
        self.assertEqual(view["storage_offset"], 32)

    def test_stacks_resolved_to_frames(self):
        expected = [
            {"file": "model.py", "line": 7, "function": "forward"},
            {"file": "train.py", "line": 42, "function": "step"},
            {"address": hex(0x400000 + 0x123), "module": "/opt/fake/libfake.so+0x123"},
            {"address": hex(0x999999), "module": None},
        ]
        users = [r for r in self.records if r.get("stack_id") == 1]
        self.assertGreaterEqual(len(users), 6)
        for r in users:
            self.assertEqual(r["stack"], expected, r["type"])
        stack = self.of_type("stack")[0]
        self.assertEqual(stack["stack"], expected)
        self.assertEqual(stack["python_frames"], [2, 1])
        # stack_id 0 means none.
        expect_freed = self.of_type("mark")[1]
        self.assertIsNone(expect_freed["stack"])

    def test_census_and_rest(self):
        begin, end = self.of_type("census")
        self.assertEqual((begin["phase"], end["phase"]), ("begin", "end"))
        self.assertIsNone(begin["c10d_unwaited_works"])
        self.assertEqual(end["c10d_unwaited_works"], 0)
        storage = self.of_type("census_storage")[0]
        self.assertEqual(storage["holders"], [{"tensor_id": 2, "reachable_bytes": 128}])
        self.assertEqual(storage["use_count"], 3)
        self.assertEqual(self.of_type("module")[0]["build_id"], "01ab")
        self.assertEqual(self.of_type("free")[0]["phase"], "free")
        self.assertEqual(self.of_type("lost")[0]["records_lost"], 5)
        self.assertEqual(self.of_type("oom")[0]["bytes_requested"], 1 << 30)
        self.assertEqual(self.of_type("segment_alloc")[0]["bytes"], 1 << 20)

    def test_text_format_one_line_per_record(self):
        result = dump(self.trace, "text")
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        self.assertTrue(lines[0].startswith("# type=header"))
        body = lines[1:]
        self.assertEqual(len(body), len(self.records))
        for line, record in zip(body, self.records):
            self.assertEqual(int(line.split()[0]), record["seq"])
        op_begin = next(l for l in body if " op_begin " in l)
        self.assertIn("name=aten::add", op_begin)
        self.assertIn("stack=[model.py:7 forward < train.py:42 step < libfake.so+0x123 < 0x999999]",
                      op_begin)
        self.assertIn("records=%d" % len(self.records), result.stderr)

    def test_truncated_copy_keeps_complete_records(self):
        full = {r["seq"]: r for r in self.records}
        for cut in (len(self.trace_bytes) - 3, len(self.trace_bytes) * 2 // 3):
            path = os.path.join(self.tmp.name, "cut%d.mltrace" % cut)
            with open(path, "wb") as f:
                f.write(self.trace_bytes[:cut])
            result = dump(path)
            self.assertEqual(result.returncode, 0, result.stderr)
            lines = jsonl(result.stdout)
            summary = lines[-1]
            records = lines[1:-1]
            self.assertFalse(summary["complete"])
            self.assertTrue(summary["truncated"])
            self.assertEqual(summary["records"], len(records))
            self.assertGreater(len(records), 0)
            self.assertLess(len(records), len(full))
            for r in records:
                self.assertEqual(r, full[r["seq"]])
            warnings = [l for l in result.stderr.splitlines() if "truncated" in l]
            self.assertEqual(len(warnings), 1, result.stderr)

    def test_trace_without_end_record_is_truncated(self):
        path = os.path.join(self.tmp.name, "noend.mltrace")
        subprocess.run([ARGS.make_trace, path, "--no-end"], check=True)
        result = dump(path)
        self.assertEqual(result.returncode, 0)
        lines = jsonl(result.stdout)
        self.assertFalse(lines[-1]["complete"])
        self.assertEqual(len(lines) - 2, len(self.records) - 1)  # all but the end record
        self.assertIn("truncated", result.stderr)

    def assert_refused(self, path, *fragments):
        for fmt in ("text", "jsonl"):
            result = dump(path, fmt)
            self.assertEqual(result.returncode, 2)
            self.assertEqual(result.stdout, "")
            lines = result.stderr.splitlines()
            self.assertEqual(len(lines), 1, result.stderr)
            self.assertTrue(lines[0].startswith("memlife dump: "), lines[0])
            for fragment in fragments:
                self.assertIn(fragment, lines[0])

    def test_garbage_is_refused_in_one_line(self):
        path = os.path.join(self.tmp.name, "garbage.mltrace")
        with open(path, "wb") as f:
            f.write(os.urandom(4096))
        self.assert_refused(path, path)

    def test_missing_file_is_refused(self):
        self.assert_refused(os.path.join(self.tmp.name, "absent.mltrace"), "absent.mltrace")

    def test_newer_version_is_refused_naming_both(self):
        path = os.path.join(self.tmp.name, "v99.mltrace")
        data = bytearray(self.trace_bytes)
        data[8:12] = (99).to_bytes(4, "little")
        with open(path, "wb") as f:
            f.write(data)
        self.assert_refused(path, "99", "this memlife reads (version")


if __name__ == "__main__":
    ARGS, argv = cli_test_args.parse()
    unittest.main(argv=argv, verbosity=2)
