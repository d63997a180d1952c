#!/usr/bin/env python3
"""Golden `memlife dump` tests: committed traces (recorded on the H200, and
one written by the format-1 recorder) whose dump output is compared line by
line with tests/cli/golden/. A change to how any record's fields are
encoded, decoded, named or printed shows here as the first line that
differs.

    test_golden_dump.py --memlife build/bin/memlife            # compare
    test_golden_dump.py --memlife build/bin/memlife --update   # rewrite the goldens

Update only for an intended change of the dump's output, and say so in the
commit.
"""
import argparse
import difflib
import subprocess
import sys
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "golden"

# (trace under traces/, dump format, golden file name). Together they hold
# every record kind the recorder writes on a CPU run (traces/cpu/small_loop.py:
# holder marks, a gloo collective and its wait, censuses, tensor deaths) and
# on a GPU run (segments, NCCL), in formats 1, 2 and 3.
CASES = [
    ("cpu/small_loop.mltrace", "text", "small_loop.txt"),
    ("cpu/small_loop.mltrace", "jsonl", "small_loop.jsonl"),
    ("gpu/corpus/leaky_cuda/vm-1381.mltrace", "text", "leaky_cuda.txt"),
    ("gpu/corpus/leaky_cuda/vm-1381.mltrace", "jsonl", "leaky_cuda.jsonl"),
    ("gpu/corpus/seed000_set_data/vm-1314.mltrace", "text", "seed000_set_data.txt"),
    ("gpu/corpus/seed000_set_data/vm-1314.mltrace", "jsonl", "seed000_set_data.jsonl"),
    ("gpu/corpus/seed001_unwaited/vm-1273.mltrace", "text", "seed001_unwaited.txt"),
    ("gpu/seed000_set_data.mltrace", "jsonl", "seed000_set_data.format1.jsonl"),
]

MEMLIFE = None
UPDATE = False


def dump(trace, fmt):
    run = subprocess.run([MEMLIFE, "dump", "--format", fmt, str(REPO / "traces" / trace)],
                         capture_output=True, text=True)
    if run.returncode != 0:
        raise AssertionError(f"memlife dump {trace} exited {run.returncode}: {run.stderr}")
    # The header line names the trace's host and pid as recorded: kept, they
    # are part of the committed trace.
    return run.stdout.splitlines()


class GoldenDump(unittest.TestCase):
    def test_every_case(self):
        for trace, fmt, golden in CASES:
            with self.subTest(golden=golden):
                lines = dump(trace, fmt)
                path = GOLDEN / golden
                if UPDATE:
                    path.write_text("\n".join(lines) + "\n")
                    continue
                self.assertTrue(path.exists(), f"no golden {path} (run with --update)")
                want = path.read_text().splitlines()
                if lines != want:
                    diff = list(difflib.unified_diff(want, lines, f"golden/{golden}",
                                                     f"dump {trace}", n=1, lineterm=""))
                    first = next(i for i, (a, b) in enumerate(zip(want + [None] * len(lines),
                                                                   lines + [None] * len(want)))
                                 if a != b)
                    self.fail(f"dump of {trace} ({fmt}) differs from golden/{golden} first at "
                              f"line {first + 1}:\n" + "\n".join(diff[:40]))

    def test_goldens_cover_every_record_kind_the_recorder_writes(self):
        # The goldens are worth as much as what they hold.
        kinds = set()
        for _, fmt, golden in CASES:
            if fmt == "jsonl" or golden.endswith(".txt"):
                for line in (GOLDEN / golden).read_text().splitlines():
                    if fmt == "jsonl":
                        import json
                        kinds.add(json.loads(line)["type"])
                    elif not line.startswith("#"):
                        kinds.add(line.split()[3])
        for kind in ("process", "thread", "module", "string", "frame", "stack", "alloc", "free",
                     "segment_alloc", "segment_free", "tensor", "tensor_death", "op",
                     "collective_issue", "collective_wait", "mark", "census", "census_storage",
                     "end"):
            self.assertIn(kind, kinds)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--memlife", required=True)
    parser.add_argument("--update", action="store_true")
    args, rest = parser.parse_known_args()
    MEMLIFE, UPDATE = args.memlife, args.update
    unittest.main(argv=[sys.argv[0], *rest])
