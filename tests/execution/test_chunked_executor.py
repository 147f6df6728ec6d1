"""The chunked executor (the local GPU executor's queue) through the CPU device, and the
per-phase budgets of workers (CPU)."""
from __future__ import annotations

import collections
import threading
import time

from exec_fixtures import CPU_OPTIONS, load_fixtures
from workbench.execution import executors
from workbench.execution.executors import ChunkedExecutor
from workbench.execution.hardware import cpu_hardware
from workbench.execution.verdict import PhaseBudget
from workbench.records import Candidate, Status

FAULTS = {f.name: f for f in load_fixtures("faults")}
HONEST = {f.name: f for f in load_fixtures("honest")}


def _variant(fixture, i: int) -> Candidate:
    """The fixture's behaviour under a distinct candidate id."""
    return Candidate.from_source(fixture.problem.id, fixture.candidate.source + f"\n_VARIANT = {i}\n",
                                 origin=f"test:{fixture.name}")


def _spy_chunks(monkeypatch) -> list[list[str]]:
    """The candidate ids of each run_chunk call the executor makes (one per worker process it
    starts), in call order."""
    chunks: list[list[str]] = []
    real = executors.run_chunk

    def spy(job, candidates, *a, **kw):
        chunks.append([c.id for c in candidates])
        return real(job, candidates, *a, **kw)

    monkeypatch.setattr(executors, "run_chunk", spy)
    return chunks


def test_chunks_keep_one_measurement_per_candidate_through_crashes(monkeypatch):
    honest = [HONEST["softmax_manual_torch"], HONEST["softmax_triton_row"]]
    plan = [(honest[0], "ok"), (honest[1], "ok"), (FAULTS["segfault"], "crashed"), (honest[0], "ok"),
            (FAULTS["os_exit"], "crashed"), (honest[1], "ok"), (FAULTS["hang"], "timeout"), (honest[0], "ok")]
    cands = [_variant(f, i) for i, (f, _) in enumerate(plan)]
    problem = honest[0].problem
    chunks = _spy_chunks(monkeypatch)
    done_at: dict[int, float] = {}
    with ChunkedExecutor(cpu_hardware(), device="cpu", workers=2, max_chunk=8, timeout_s=12, run_timeout_s=30,
                         options={"seeds": [0, 1], **CPU_OPTIONS}, coalesce_s=0.3) as ex:
        # One submit per candidate, as a search loop does: the queue groups them.
        futures = [ex.submit(problem, [c])[0] for c in cands]
        futures.append(ex.submit(problem, [cands[0]])[0])  # the same candidate again
        for i, f in enumerate(futures):
            f.add_done_callback(lambda _f, i=i: done_at.setdefault(i, time.monotonic()))
        results = [f.result(timeout=300) for f in futures]
    assert [m.candidate_id for m in results] == [c.id for c in cands] + [cands[0].id]
    got = [(f.name, m.status.value, m.reason) for (f, _), m in zip(plan, results)]
    assert [s for _, s, _ in got] == [want for _, want in plan], got
    assert results[-1].status is Status.OK
    assert "SIGSEGV" in results[2].reason and "code 7" in results[4].reason
    assert "12 s" in results[6].reason
    # Grouped: fewer chunks than submissions, never the same id twice in one chunk; what a
    # dead worker did not reach went back to the queue (so ids can appear in later chunks).
    assert any(len(c) > 1 for c in chunks)
    assert all(len(set(c)) == len(c) for c in chunks)
    assert {i for c in chunks for i in c} == {c.id for c in cands}
    assert len(chunks) < len(futures)
    # Futures resolve as candidates finish, not when the whole chunk is done: an honest
    # candidate queued before the hang in its chunk is known long before the hang's 12 s
    # budget runs out.
    hang_chunk = next(c for c in chunks if cands[6].id in c)
    earlier = [k for k, c in enumerate(cands) if c.id in hang_chunk[:hang_chunk.index(cands[6].id)]
               and plan[k][1] == "ok"]
    assert earlier and min(done_at[k] for k in earlier) < done_at[6] - 8


def test_a_lingering_worker_takes_later_submissions_of_its_problem(monkeypatch):
    """With linger_s, candidates submitted one at a time (as a live search does) run in the warm
    worker process of the chunk before them: an oversized source is refused without being sent,
    a crash costs only itself, and the next candidate gets a fresh process."""
    from workbench.execution.chunked import MAX_SOURCE_BYTES

    honest = HONEST["softmax_manual_torch"]
    problem = honest.problem
    c0, c1, c3 = (_variant(honest, i) for i in (0, 1, 3))
    big = Candidate.from_source(problem.id, honest.candidate.source + "#" * (MAX_SOURCE_BYTES + 1))
    crash = _variant(FAULTS["segfault"], 2)
    chunks = _spy_chunks(monkeypatch)
    with ChunkedExecutor(cpu_hardware(), device="cpu", workers=1, max_chunk=8, timeout_s=30, run_timeout_s=30,
                         options=CPU_OPTIONS, coalesce_s=0.05, linger_s=20) as ex:
        first = ex.submit(problem, [c0])[0].result(timeout=120)
        later = ex.submit(problem, [big, c1])
        got = [f.result(timeout=120) for f in later]
        crashed = ex.submit(problem, [crash])[0].result(timeout=120)
        last = ex.submit(problem, [c3])[0].result(timeout=120)
    assert first.ok and got[1].ok and last.ok, (first.reason, got[1].reason, last.reason)
    assert got[0].status is Status.COMPILE_ERROR and "byte limit" in got[0].reason
    assert crashed.status is Status.CRASHED and "SIGSEGV" in crashed.reason
    # Two worker processes: the first ran c0, then (lingering) big, c1 and the crash; c3 came
    # after the crash ended that process.
    assert chunks == [[c0.id], [c3.id]]


def test_linger_is_bounded():
    import pytest

    from workbench.errors import ConfigError

    for bad in (-1.0, 61.0):
        with pytest.raises(ConfigError, match="linger_s"):
            ChunkedExecutor(cpu_hardware(), device="cpu", workers=1, linger_s=bad)


def test_a_closed_executor_refuses_work_and_cancels_the_queue():
    ex = ChunkedExecutor(cpu_hardware(), device="cpu", workers=1, coalesce_s=30)
    fut = ex.submit(HONEST["relu_where"].problem, [HONEST["relu_where"].candidate])[0]
    cuda = Candidate.from_source("L1/01_softmax", "from torch.utils.cpp_extension import load_inline\n"
                                 "class ModelNew: pass\n")
    refused = ex.submit(HONEST["relu_where"].problem, [cuda])[0]
    assert refused.done() and refused.result().status is Status.RUNTIME_ERROR  # at once, as a status
    ex.close()
    assert fut.cancelled()
    try:
        ex.submit(HONEST["relu_where"].problem, [HONEST["relu_where"].candidate])
    except Exception as e:  # noqa: BLE001
        assert "closed" in str(e)
    else:
        raise AssertionError("a closed executor accepted work")


def _held(lock_path):
    """The GPU's lock file held shared by this process (another worker checking)."""
    import fcntl

    fh = open(lock_path, "a+")
    fcntl.flock(fh, fcntl.LOCK_SH)
    return fh


def test_phase_budget_counts_work_not_waiting(tmp_path):
    lock = str(tmp_path / "gpu0.lock")
    holder = _held(lock)
    b = PhaseBudget(compile_s=10, run_s=5, now=0.0, lock_path=lock)
    assert b.poll(4.0) is None                    # starting up: 4 s of compile budget
    assert b.poll(5.0) is None                    # 1 more s of start-up
    b.set_phase("wait-gpu")
    assert b.poll(500.0) is None                  # 495 s waiting for a GPU someone holds: free
    assert b.spent == {"compile": 5.0, "run": 0.0}
    b.set_phase("checking")
    assert b.poll(504.0) is None                  # 4 s of checking
    b.set_phase("timing")
    assert b.poll(510.0) == "timing took longer than 5 s"
    # With no timing budget, timing counts against the compile budget.
    one = PhaseBudget(compile_s=10, run_s=None, now=0.0)
    one.set_phase("timing")
    assert one.poll(11.0) == "no result within 10 s (not counting waits for the GPU)"
    stuck = PhaseBudget(compile_s=3, run_s=5, now=0.0)
    assert stuck.poll(4.0) == "compilation and correctness took longer than 3 s"
    holder.close()


def test_a_claimed_wait_while_nobody_holds_the_gpu_counts_as_work(tmp_path):
    # A stall disguised as a wait for the GPU: the lock is free, so the time is compile time.
    lock = str(tmp_path / "gpu0.lock")
    free = PhaseBudget(compile_s=10, run_s=5, now=0.0, lock_path=lock)
    free.set_phase("wait-gpu")
    assert free.poll(11.0) == "compilation and correctness took longer than 10 s"
    nolock = PhaseBudget(compile_s=10, run_s=5, now=0.0)
    nolock.set_phase("wait-gpu")
    assert nolock.poll(11.0) is not None


def test_phase_budget_polled_from_threads_is_independent(tmp_path):
    # Budgets of two candidates (two chunk workers) never share their clocks.
    lock = str(tmp_path / "gpu0.lock")
    holder = _held(lock)
    budgets = [PhaseBudget(compile_s=1, run_s=1, now=0.0, lock_path=lock) for i in range(2)]
    out: list = [None, None]

    def poll(i):
        budgets[i].poll(0.5)
        if i == 0:
            budgets[i].set_phase("wait-gpu")
        out[i] = budgets[i].poll(3.0)

    ts = [threading.Thread(target=poll, args=(i,)) for i in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    holder.close()
    assert out[0] is None and out[1] is not None


def test_the_rest_of_a_chunk_leaves_a_worker_whose_candidate_was_caught(monkeypatch):
    """A candidate the judge finds cheating (here: its stored first answer returned for new
    inputs) may have left anything in its process that no check saw: the parent stops that
    worker, and the candidates after it run in a fresh one."""
    from workbench.execution import chunked

    cheat = next(f for f in load_fixtures("cheats") if f.name == "cache_across_calls")
    honest = HONEST["softmax_manual_torch"]
    assert cheat.problem.id == honest.problem.id
    workers: list[list[str]] = []
    real = chunked._one_worker

    def spy(work, job, pending, *a, **kw):
        workers.append([c.id for c in pending])
        return real(work, job, pending, *a, **kw)

    monkeypatch.setattr(chunked, "_one_worker", spy)
    cands = [_variant(honest, 0), _variant(cheat, 1), _variant(honest, 2), _variant(honest, 3)]
    with ChunkedExecutor(cpu_hardware(), device="cpu", workers=1, max_chunk=8, timeout_s=30, run_timeout_s=30,
                         options={"seeds": [0, 1], **CPU_OPTIONS}, coalesce_s=0.3) as ex:
        results = [f.result(timeout=300) for f in ex.submit(honest.problem, cands)]
    assert [m.status for m in results] == [Status.OK, Status.CHEAT_SUSPECTED, Status.OK, Status.OK], \
        [(m.status, m.reason) for m in results]
    # The first worker took all four and was stopped after the second; the rest ran in a new one.
    assert workers[0] == [c.id for c in cands] and workers[1] == [cands[2].id, cands[3].id], workers
