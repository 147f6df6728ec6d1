"""The order of `make test`'s tests under pytest-xdist (hooks imported by tests/conftest.py).

`make test` runs two pytest-xdist workers, each given whole files (--dist loadfile). xdist's own
order hands out the files with the most tests first, so the files of one long test (the corpus
halves, the notebooks) came last and one worker ran them alone while the other sat idle. Here
the long files go first, longest first (the order of a measured run; it only decides when a
file starts, never what it checks), and the tests of SPLIT_FILES, which share no costly
module state or cache, are handed out one by one so that they fill the gaps at the end.
"""
from __future__ import annotations

LONG_FIRST = (
    "tests/seeds/test_kb_corpus_seeds_odd.py",
    "tests/seeds/test_kb_corpus_seeds_even.py",
    # One file, one process: notebooks 02 and 04 fit the same five learned forecasters, and the
    # fit cache serves the second only when the first has finished (in a clean-clone run with
    # the notebooks handed out one by one, both fitted at once: 04 took 149 s, after 02 62 s).
    "tests/notebooks/test_notebooks.py",
    "tests/execution/adversarial/test_adversarial.py",
    "tests/evaluate/test_forecast_variants.py",
    "tests/search/test_lowering.py",
    "tests/families/test_families.py",
    "tests/test_live_bench.py",
    "tests/ui/test_browser_llm.py",
    "tests/execution/test_ray_executor.py",
    "tests/execution/test_executors.py",
    "tests/ui/test_browser.py",
    "tests/forecast/test_learned.py",
    "tests/execution/test_honest_zoo.py",
)
#: Files scheduled test by test, last (many short independent tests: the fillers).
SPLIT_FILES = ("tests/zoo/test_zoo_cpu.py",)


def _file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def pytest_collection_modifyitems(session, config, items):
    """LONG_FIRST files first (in that order), then the rest as collected, then SPLIT_FILES
    that are not long (a stable sort: tests keep their order within a file)."""
    rank = {f: i for i, f in enumerate(LONG_FIRST)}

    def key(item):
        f = _file_of(item.nodeid)
        if f in rank:
            return (0, rank[f])
        return (2, 0) if f in SPLIT_FILES else (1, 0)

    items.sort(key=key)


def pytest_xdist_make_scheduler(config, log):
    """Whole files per worker, in collection order (see LONG_FIRST), SPLIT_FILES test by test."""
    from xdist.scheduler import LoadFileScheduling

    class LongFirst(LoadFileScheduling):
        def __init__(self, config, log=None):
            super().__init__(config, log)
            config.option.loadscopereorder = False  # keep the collection order

        def _split_scope(self, nodeid: str) -> str:
            return nodeid if _file_of(nodeid) in SPLIT_FILES else _file_of(nodeid)

    return LongFirst(config, log)
