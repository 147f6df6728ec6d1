"""The test order of `make test` (tests/suite_order.py) names files that exist: a renamed long file
would otherwise silently lose its early start."""
from __future__ import annotations

from pathlib import Path

import suite_order as conftest

ROOT = Path(__file__).resolve().parents[1]


def test_the_scheduled_files_exist():
    for f in conftest.LONG_FIRST + conftest.SPLIT_FILES:
        assert (ROOT / f).is_file(), f"{f} is named in tests/conftest.py but does not exist"


def test_long_files_come_first_and_split_files_last(request):
    items = request.session.items
    files = [conftest._file_of(i.nodeid) for i in items]
    long_seen = [f for f in dict.fromkeys(files) if f in conftest.LONG_FIRST]
    # The long files that were collected, first and in LONG_FIRST's order.
    assert long_seen == [f for f in conftest.LONG_FIRST if f in long_seen]
    assert files[:len([f for f in files if f in conftest.LONG_FIRST])] == [f for f in files if f in conftest.LONG_FIRST]
    rest = [f for f in files if f not in conftest.LONG_FIRST]
    split = [f in conftest.SPLIT_FILES for f in rest]
    assert split == sorted(split), "a SPLIT_FILES test before another file's"
