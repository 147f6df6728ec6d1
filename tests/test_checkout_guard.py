"""The guard that fails a test session which writes into the checkout (tests/checkout_guard.py)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from checkout_guard import changed, tree_state

GUARD = Path(__file__).with_name("checkout_guard.py")
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")


def _repo(root: Path) -> Path:
    root.mkdir()
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")
    (root / ".gitignore").write_text("ignored/\n__pycache__/\n.pytest_cache/\n")
    (root / "tracked.txt").write_text("a\n")
    (root / "gone.txt").write_text("b\n")
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "init"]):
        subprocess.run(["git", *cmd], cwd=root, check=True, env=env, capture_output=True)
    return root


def test_changed_names_rewritten_new_and_removed_files_not_ignored_ones(tmp_path):
    root = _repo(tmp_path / "repo")
    before = tree_state(root)
    assert set(before) == {".gitignore", "gone.txt", "tracked.txt"}
    os.utime(root / "tracked.txt", ns=(1, 1))  # same bytes, rewritten (a screenshot regenerated)
    (root / "new.txt").write_text("x")
    (root / "ignored").mkdir()
    (root / "ignored" / "cache.bin").write_text("x")
    (root / "gone.txt").unlink()
    after = tree_state(root)
    assert changed(before, after) == ["gone.txt", "new.txt", "tracked.txt"]
    assert changed(before, after, exempt=("new.txt", "tracked.txt")) == ["gone.txt"]
    assert tree_state(tmp_path / "not-a-repo-dir-that-is-missing") is None


@pytest.mark.parametrize("target,fails", [("Path(__file__).parent / 'out.txt'", True),
                                          ("tmp_path / 'out.txt'", False)])
def test_a_session_that_writes_into_the_checkout_fails(tmp_path, target, fails):
    root = _repo(tmp_path / "repo")
    shutil.copy(GUARD, root / "checkout_guard.py")
    (root / "conftest.py").write_text("from checkout_guard import pytest_sessionfinish, pytest_sessionstart\n")
    (root / "test_w.py").write_text(f"from pathlib import Path\n\ndef test_w(tmp_path):\n"
                                    f"    ({target}).write_text('x')\n")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "t"], cwd=root, check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("WORKBENCH_TREE_GUARD", "WORKBENCH_SCREENSHOTS_DIR")}
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_w.py"],
                       cwd=root, capture_output=True, text=True, env=env, timeout=120)
    assert (r.returncode == 1) is fails, r.stdout + r.stderr
    assert ("tests changed files of the checkout: out.txt" in r.stdout) is fails
