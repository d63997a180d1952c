"""Runs corpus programs one after another in this process, each inside its
own memlife.record() block (runpy, as `python3 FILE ARGS` would), and
prints one line per program, "MEMLIFE-BLOCK" and JSON: its findings and the report's warnings.

    python3 record_blocks.py PROGRAMS.json

PROGRAMS.json lists {"name", "path", "args", "truth"}; each program writes
its ground truth to "truth" ($MEMLIFE_CORPUS_TRUTH), as under run_corpus.
"""
import json
import os
import runpy
import sys

import torch  # noqa: F401  (the recorder attaches to the torch already loaded)

import memlife


def main(listing):
    with open(listing) as f:
        programs = json.load(f)
    for prog in programs:
        os.environ["MEMLIFE_CORPUS_TRUTH"] = prog["truth"]
        sys.argv = [prog["path"], *prog["args"]]
        # As `python3 FILE` does: the program's folder first on sys.path, for
        # its folder's helpers (clean/_lightning.py).
        sys.path.insert(0, os.path.dirname(os.path.abspath(prog["path"])))
        try:
            with memlife.record() as rec:
                runpy.run_path(prog["path"], run_name="__main__")
        finally:
            sys.path.pop(0)
        print("MEMLIFE-BLOCK", json.dumps({"name": prog["name"], "findings": rec.findings,
                                           "warnings": rec.report["warnings"]}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
