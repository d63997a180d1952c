"""Shared argument handling for the CLI test scripts: ctest passes the paths
of the binaries under test; everything else goes to unittest."""
import argparse
import os
import sys


def parse(extra=()):
    parser = argparse.ArgumentParser()
    parser.add_argument("--memlife", required=True)
    parser.add_argument("--make-trace", required=True)
    for name in extra:
        parser.add_argument(name)
    args, rest = parser.parse_known_args()
    # Tests change directory; paths from the command line must not care.
    for key, value in vars(args).items():
        if value:
            setattr(args, key, os.path.abspath(value))
    return args, [sys.argv[0]] + rest
