"""Tests write only to temporary directories: a session that changes the checkout fails.

At the start of a pytest session the guard records the size and modification time of every file
git would show (tracked files, and untracked files that .gitignore does not cover); at the end it
fails the session, naming the files, if any of them changed or a new one appeared. Ignored paths
(caches, build folders, test-artifacts/) are not checked. The checkout is pytest's rootdir. Paths under $WORKBENCH_SCREENSHOTS_DIR
are exempt: `make screenshots` writes the README screenshots there on purpose. Editing files of
the checkout while the tests run trips the guard too; set WORKBENCH_TREE_GUARD=0 to turn it off
for such a run.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

_snapshot: dict[str, tuple[int, int]] | None = None


def tree_state(root: Path) -> dict[str, tuple[int, int]] | None:
    """{path: (mtime_ns, size)} of the files git would show under `root`; None outside git."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             cwd=root, capture_output=True, check=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    state = {}
    for rel in filter(None, out.decode(errors="surrogateescape").split("\0")):
        try:
            st = (root / rel).stat()
        except OSError:  # listed but deleted: compared as missing
            continue
        state[rel] = (st.st_mtime_ns, st.st_size)
    return state


def changed(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]],
            exempt: tuple[str, ...] = ()) -> list[str]:
    """Paths that appeared, changed or disappeared between two states, except those under `exempt`."""
    paths = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
    return sorted(p for p in paths if not any(p == e or p.startswith(e.rstrip("/") + "/") for e in exempt))


def _exempt(root: Path) -> tuple[str, ...]:
    shots = os.environ.get("WORKBENCH_SCREENSHOTS_DIR")
    if not shots:
        return ()
    try:
        return (str(Path(shots).resolve().relative_to(root.resolve())),)
    except ValueError:  # outside the checkout
        return ()


def pytest_sessionstart(session) -> None:
    global _snapshot
    _snapshot = None if os.environ.get("WORKBENCH_TREE_GUARD") == "0" else tree_state(session.config.rootpath)


def pytest_sessionfinish(session, exitstatus) -> None:
    if _snapshot is None:
        return
    root = session.config.rootpath
    after = tree_state(root)
    paths = changed(_snapshot, after, _exempt(root)) if after is not None else []
    if paths:
        shown = ", ".join(paths[:20]) + (f" and {len(paths) - 20} more" if len(paths) > 20 else "")
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        msg = (f"tests changed files of the checkout: {shown}. Tests write only under tmp_path; "
               "(if you edited these files during the run, rerun, or set WORKBENCH_TREE_GUARD=0)")
        if reporter is not None:
            reporter.write_line(msg, red=True)
        if session.exitstatus == 0:
            session.exitstatus = 1
