"""`workbench` command line. Each command group lives in `workbench/commands/<group>.py`
and exposes `register(subparsers)`; the handler it sets returns an exit code."""
from __future__ import annotations

import argparse
import importlib
import sys

from workbench.errors import WorkbenchError

# Command groups, in the order `--help` lists them.
COMMAND_MODULES = [
    "workbench.commands.problems",
    "workbench.commands.measure",
    "workbench.commands.db",
    "workbench.commands.dataset",
    "workbench.commands.search",
    "workbench.commands.evaluate",
    "workbench.commands.train",
    "workbench.commands.forecast",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="workbench",
        description="GPU Forecasters Workbench: measure kernels, forecast their speedups, "
        "evaluate forecasters and run kernel searches.",
    )
    parser.add_argument("--db", default=None,
                        help="SQLite database path (default: $WORKBENCH_DB or ./workbench.sqlite)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    from workbench.execution.contain import protect_process

    protect_process()   # the user's keys live in this process: no process of the user may read its memory
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        return int(args.handler(args) or 0)
    except WorkbenchError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
