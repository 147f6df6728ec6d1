"""Helpers shared by the benchmark scripts (each adds this directory to sys.path)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


#: Appended to the commit when tracked code differs from it (`CODE`).
DIRTY = " (with uncommitted changes to tracked files)"


#: The tracked paths whose edits make a result not come from the named commit: the code, not the
#: data that ingest rewrites (kernels_cache) nor the results a re-run rewrites.
CODE = ("workbench", "benchmarks", "widgets", "pyproject.toml", ":(exclude)benchmarks/results")


def _git(root: Path, *args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                              timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def commit(root: Path = ROOT) -> str:
    """The commit that results come from: $WORKBENCH_COMMIT when set (a GPU box that got a copy of
    the tree without its git history), else `git rev-parse HEAD` of the checkout at `root`, with
    `DIRTY` appended when the tracked code (`CODE`) differs from that commit: a tree with stale
    history or uncommitted edits says so instead of naming a commit it does not match."""
    if os.environ.get("WORKBENCH_COMMIT"):
        return os.environ["WORKBENCH_COMMIT"]
    out = _git(root, "rev-parse", "HEAD")
    if not re.fullmatch(r"[0-9a-f]{40}", out):
        return "unknown (no git history here; set WORKBENCH_COMMIT)"
    changed = _git(root, "status", "--porcelain", "--untracked-files=no", "--", *CODE)
    return out + DIRTY if changed else out


def write_results(results_dir: Path, name: str, text: str, full: bool, out: str | None,
                  partial: str) -> list[Path]:
    """Write a results file `name`: into `results_dir` only for a `full` run (a partial run never
    replaces a committed result), and into `out` when given. With neither, say `partial` on
    stderr. Returns the paths written."""
    paths = ([results_dir / name] if full else []) + ([Path(out) / name] if out else [])
    if not paths:
        print(partial, file=sys.stderr)
    for p in paths:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return paths
