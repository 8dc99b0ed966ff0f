"""Run a project's tests with the pinned pytest and record each test's outcome (in a task
container). Meant to be started as ``python3 -I -B rb_run.py ...``: isolated mode, so nothing
from the environment or the current directory is imported, only ``--pythonpath`` entries.

    python3 -I -B rb_run.py --root /app --pythonpath src --out /tmp/o.json [--trace]
        [--maxfail N] [--tb STYLE] -- tests/test_x.py::test_y ...

``--tb line``: each failure's report is its crash line (pytest's default reads and parses the
source of every traceback entry); the recorded outcomes and messages are the same.

Standalone: imports nothing from factory.
"""

from __future__ import annotations

import argparse
import os
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--root", required=True)
    parser.add_argument("--pythonpath", action="append", default=[])
    parser.add_argument("--out", required=True)
    parser.add_argument("--trace", action="store_true")
    parser.add_argument("--maxfail", type=int, default=0)
    parser.add_argument("--tb", choices=["auto", "long", "short", "line", "native", "no"])
    parser.add_argument("ids", nargs="*")
    args = parser.parse_args(argv)
    root = os.path.realpath(args.root)
    here = os.path.dirname(os.path.realpath(__file__))
    sys.path[:0] = [here] + [
        os.path.normpath(os.path.join(root, p)) for p in args.pythonpath or ["."]
    ]
    os.chdir(root)
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    import pytest
    from rb_outcomes import Outcomes

    plugin = Outcomes(args.out, root, trace=args.trace)
    options = [
        "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-o", "addopts=",
        "--rootdir", root, "--confcutdir", root, "-o", "console_output_style=classic",
    ]  # fmt: skip
    if args.maxfail:
        options += ["--maxfail", str(args.maxfail)]
    if args.tb:
        options += ["--tb", args.tb]
    return int(pytest.main(options + list(args.ids), plugins=[plugin]))


if __name__ == "__main__":
    sys.exit(main())
