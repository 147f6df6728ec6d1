"""Helpers shared by the benchmark scripts (each adds this directory to sys.path)."""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def commit() -> str:
    """The commit that results come from: $WORKBENCH_COMMIT when set (a GPU box that got a copy of
    the tree without its git history), else `git rev-parse HEAD` of this checkout."""
    if os.environ.get("WORKBENCH_COMMIT"):
        return os.environ["WORKBENCH_COMMIT"]
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                             timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        out = ""
    return out if re.fullmatch(r"[0-9a-f]{40}", out) else "unknown (no git history here; set WORKBENCH_COMMIT)"
