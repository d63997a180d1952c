"""A notebook's code cells as one script, for running a tutorial unchanged
under `memlife run` (botorch's tutorials in the README's table "Programs
from other projects"): `%` magics and `!` shell lines become `pass`, so the
blocks around them stay valid Python.

    python3 scripts/external/notebook_script.py NOTEBOOK.ipynb > SCRIPT.py
"""
import json
import sys


def main(path):
    cells = json.load(open(path))["cells"]
    out = []
    for cell in cells:
        if cell["cell_type"] != "code":
            continue
        lines = []
        for line in "".join(cell["source"]).splitlines():
            code = line.lstrip()
            indent = line[: len(line) - len(code)]
            lines.append(indent + "pass" if code.startswith(("%", "!")) else line)
        out.append("\n".join(lines))
    sys.stdout.write("\n\n".join(out) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
