"""Helpers shared by the benchmark scripts (each adds this directory to sys.path)."""
from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import FIRST_COMPLETED, Future, wait
from pathlib import Path
from typing import Any, Callable, Iterable

ROOT = Path(__file__).resolve().parents[1]


def read_jsonl(path: Path) -> list[dict]:
    """The JSON objects of a JSON-lines file, plain or gzipped (`.gz`), blank lines skipped."""
    opener = gzip.open if Path(path).suffix == ".gz" else open
    with opener(path, "rt") as fh:
        return [json.loads(x) for x in fh if x.strip()]


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


def wait_measurements(futures: Iterable[Future], deadline: float, path: Path, started: float, mode: str = "a",
                      progress: Callable[[int, int, float], None] | None = None) -> tuple[dict[str, Any], float, bool]:
    """Wait for an executor's measurement futures until `deadline` (epoch seconds), writing each
    Measurement to `path` as one JSON line as it finishes (`mode` "a" appends, "w" starts the
    file; every line is flushed, so a cut run keeps what finished). Cancelled futures are skipped.

    Returns (measurements by candidate id, seconds from `started` (time.monotonic()) to the last
    measurement, whether the deadline came first). `progress(done, just_finished, seconds)` is
    called after each wait that finished something.
    """
    done: dict[str, Any] = {}
    t_last, cut = started, False
    with open(path, mode) as fh:
        pending = set(futures)
        while pending:
            left = deadline - time.time()
            if left <= 0:
                cut = True
                break
            finished, pending = wait(pending, timeout=min(left, 5.0), return_when=FIRST_COMPLETED)
            for f in finished:
                if f.cancelled():
                    continue
                m = f.result()
                done[m.candidate_id] = m
                fh.write(json.dumps(m.to_dict()) + "\n")
                fh.flush()
                t_last = time.monotonic()
            if finished and progress is not None:
                progress(len(done), len(finished), t_last - started)
    return done, t_last - started, cut
