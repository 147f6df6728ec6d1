"""Seeding and searching corpus files through the CPU executor (Triton interpreter, sizes
reduced): `run_corpus` gives each problem a seed and a search of budget 3 in one executor session,
searches four at a time, each problem's measurements in one warm worker process, and asserts that
every problem got a correct seed and used its whole budget.

Cost: a chunk is one problem's candidates, so each problem starts a worker process (torch's
import is the largest part), then runs the Triton interpreter and, in the search, the mutation
operators on its seeds (a generic seed is a large source). The corpus is split into two halves
by position (test_kb_corpus_seeds_even.py, _odd.py), so that the two test processes of
`make test` share it."""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

os.environ.setdefault("TRITON_INTERPRET", "1")

from workbench.execution.executors import ChunkedExecutor  # noqa: E402
from workbench.execution.hardware import cpu_hardware  # noqa: E402
from workbench.problems import cpu_sizes, load_dir  # noqa: E402
from workbench.search import MutationGenerator, SearchRun, ZooGenerator, make_method  # noqa: E402
from workbench.search import events as ev  # noqa: E402
from workbench.store import Store  # noqa: E402

KB = Path(__file__).parents[1] / "problems" / "kb_corpus"
#: Budgets for the reduced sizes of this test (the interpreter pays per op: small sizes keep the
#: whole corpus to minutes). The executor's own CPU sizes are larger; any size does for a seed.
TEST_BYTES, TEST_FLOPS = 256 * 2**10, 4e6
#: A file still over TEST_FLOPS at the executor's floor (cpu_sizes.MIN_SIZE: sizes of 8 or less
#: are kept) is reduced again down to this floor: a 3-D convolution or a VGG stack at sizes of 8
#: is 4-8 times over TEST_FLOPS, and minutes in the interpreter.
TEST_MIN_SIZE = 4
#: One correctness trial and the fewest timed calls (a warm-up round and one timed round): the test
#: checks seeds and budgets, not CPU speed, and each call is a run of the Triton interpreter.
OPTIONS = {"seeds": [0], "input_sets": 1, "cpu_timing": {"max_total_ms": 20, "warmup": 1, "min_runs": 1, "max_runs": 1}}


class _OneAtATime:
    """The generator's calls one at a time across the threads: Python 3.11's ast module (seeds are
    made and mutated through it) is not safe to use from several threads at once."""

    lock = threading.Lock()

    def __init__(self, gen):
        self.gen, self.name = gen, gen.name

    def seeds(self, problem):
        with self.lock:
            return self.gen.seeds(problem)

    def children(self, ctx):
        with self.lock:
            return self.gen.children(ctx)

    def generation_info(self, candidate_id):
        return self.gen.generation_info(candidate_id)


def _small(problem):
    saved = cpu_sizes.MAX_BYTES, cpu_sizes.MAX_FLOPS, cpu_sizes.MIN_SIZE
    cpu_sizes.MAX_BYTES, cpu_sizes.MAX_FLOPS = TEST_BYTES, TEST_FLOPS
    try:
        sizes = cpu_sizes.auto_cpu_sizes(problem.source, problem.id)
        cost = cpu_sizes._cost(problem.source, problem.id, sizes)
        if cost is not None and cost[1] > TEST_FLOPS:
            cpu_sizes.MIN_SIZE = TEST_MIN_SIZE
            sizes = cpu_sizes.auto_cpu_sizes(problem.source, problem.id)
    finally:
        cpu_sizes.MAX_BYTES, cpu_sizes.MAX_FLOPS, cpu_sizes.MIN_SIZE = saved
    return problem.replace(source=problem.source + f"\n\nCPU_SIZES = {sizes!r}\n")


def corpus() -> list:
    problems, errors = load_dir(KB)
    assert not errors and len(problems) >= 120
    return problems


def run_corpus(tmp_path, problems) -> None:
    """Seed and search each of `problems` (at the test's reduced sizes); assert each got a correct
    seed and a search of budget 3."""
    problems = [_small(p) for p in problems]
    results: dict[str, dict] = {}
    lock = threading.Lock()
    executor = ChunkedExecutor(cpu_hardware(), device="cpu", workers=2, max_chunk=8, timeout_s=300,
                               run_timeout_s=120, options=OPTIONS, linger_s=3.0)

    def search(p):
        gen = _OneAtATime(MutationGenerator(ZooGenerator(family_variants=False)))
        with Store(tmp_path / f"{p.id.replace('/', '_')}.sqlite") as store:
            store.put_problem(p)
            run = SearchRun(store, p, executor, gen, None, make_method("measure_all", k=2), budget=3, seed=0,
                            max_seeds=2)
            run.run()
            seeds = [e for e in ev.decode_all(store.events(run.search_id))
                     if isinstance(e, ev.Generated) and e.parent_id is None]
            row = {"used": run.used, "finish": run.finish_reason,
                   "kinds": {e.candidate.id: (e.generation or {}).get("seed_kind") for e in seeds},
                   "ok_seeds": [e.candidate.origin for e in seeds if run.measurements.get(e.candidate.id)
                                and run.measurements[e.candidate.id].ok],
                   "why": {e.candidate.origin: run.measurements[e.candidate.id].reason[:200] for e in seeds
                           if e.candidate.id in run.measurements and not run.measurements[e.candidate.id].ok}}
        with lock:
            results[p.id] = row

    try:
        with ThreadPoolExecutor(max_workers=4) as pool:
            list(pool.map(search, problems))
    finally:
        executor.close()
    no_seed = {pid: r["why"] for pid, r in results.items() if not r["ok_seeds"]}
    assert not no_seed, no_seed
    assert all(r["used"] == 3 for r in results.values()), {k: r for k, r in results.items() if r["used"] != 3}
    for pid, r in results.items():  # every seed's kind is in its generated event
        assert r["kinds"] and all(k in ("family", "generic") for k in r["kinds"].values()), (pid, r["kinds"])
