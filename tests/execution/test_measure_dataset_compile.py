"""benchmarks/device/measure_dataset.py: the two-pass torch.compile baselines
(`--compile-warm-workers`), with a stand-in for the per-problem compile process."""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path

from bench_scripts import load_bench

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "device" / "measure_dataset.py"


def _module():
    return load_bench("measure_dataset", SCRIPT)


@dataclass(frozen=True)
class _P:
    id: str


class _Compiler:
    """Stand-in for one compile-baseline process: the first call of a problem is a cold compile
    (10 s), later ones hit the cache (1 s); `fail` problems fail every time. Records how many
    calls overlapped, per pass."""

    def __init__(self, fail=()):
        self.fail = set(fail)
        self.calls: list[str] = []
        self.lock = threading.Lock()
        self.active = 0
        self.max_active: list[int] = []

    def __call__(self, p):
        with self.lock:
            first = p.id not in self.calls
            self.calls.append(p.id)
            self.active += 1
            self.max_active.append(self.active)
        time.sleep(0.05)
        with self.lock:
            self.active -= 1
        if p.id in self.fail:
            return {"problem_id": p.id, "error": "timeout after 200 s"}
        return {"problem_id": p.id, "compile_s": 10.0 if first else 1.0, "compiled_ms": 0.5}


def _run(prefix: str, n: int, fail: str, warm_workers: int, workers: int):
    """compile_baselines over n stand-in problems, `fail` failing: (problems, compiler, rows,
    written rows)."""
    problems = [_P(f"{prefix}/{i:02d}_x") for i in range(n)]
    comp = _Compiler(fail={fail})
    written: list[dict] = []
    rows = _module().compile_baselines(problems, comp, warm_workers=warm_workers, workers=workers,
                                       write=written.append)
    return problems, comp, rows, written


def test_two_passes_time_one_at_a_time_and_keep_the_cold_compile():
    problems, comp, rows, written = _run("L1", 8, "L1/03_x", warm_workers=4, workers=1)
    # first pass: every problem, several at once; second pass: the 7 that compiled, one at a time
    assert sorted(comp.calls[:8]) == sorted(p.id for p in problems)
    assert max(comp.max_active[:8]) > 1
    assert comp.calls[8:] == [p.id for p in problems if p.id != "L1/03_x"]
    assert max(comp.max_active[8:]) == 1
    assert [r["problem_id"] for r in rows] == comp.calls[8:]
    for r in rows:
        assert r["warm_cache"] is True and r["cold_compile_workers"] == 4
        assert r["cold_compile_s"] == 10.0 and r["compile_s"] == 1.0
    failed = [r for r in written if "error" in r]
    assert [(r["problem_id"], r["phase"]) for r in failed] == [("L1/03_x", "cache fill")]
    assert len(written) == 8 and all(r in written for r in rows)


def test_without_warm_workers_each_problem_is_compiled_once():
    problems, comp, rows, written = _run("L2", 5, "L2/01_x", warm_workers=0, workers=2)
    assert sorted(comp.calls) == sorted(p.id for p in problems)
    assert rows == written and len(rows) == 5
    assert not any("warm_cache" in r or "phase" in r for r in rows)
    assert [r["problem_id"] for r in rows if "error" in r] == ["L2/01_x"]


def test_a_process_that_writes_nothing_is_not_given_an_earlier_passes_row(tmp_path, monkeypatch):
    from workbench.problems import list_problems

    mod = _module()
    p = list_problems()[0]
    (tmp_path / f"{p.name}.o.json").write_text('{"problem_id": "%s", "compiled_ms": 0.5}' % p.id)
    monkeypatch.setattr(mod.subprocess, "run", lambda *a, **k: None)  # exits without writing
    assert mod.compile_process(p, tmp_path, 10.0, {}) == {"problem_id": p.id, "error": "no result"}

    def too_slow(*a, **k):
        raise mod.subprocess.TimeoutExpired(a[0], k["timeout"])

    monkeypatch.setattr(mod.subprocess, "run", too_slow)
    assert mod.compile_process(p, tmp_path, 10.0, {}) == {"problem_id": p.id, "error": "timeout after 10 s"}
