"""benchmarks/kb_bench.py: the CPU path end to end on a small KernelBench-layout folder (import,
seed, search, one row per problem, resume), and the summary's metrics and completeness rule."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import kb_bench  # noqa: E402

RELU = '''import torch
import torch.nn as nn

batch_size = 64
dim = 96
CPU_SIZES = {"batch_size": 8, "dim": 40}


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x) * 2.0


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
'''
CUMSUM = RELU.replace("torch.relu(x) * 2.0", "torch.cumsum(x, dim=1)")


def _folder(tmp_path: Path) -> Path:
    d = tmp_path / "kb"
    (d / "level1").mkdir(parents=True)
    (d / "level1" / "1_ReLU_Scale.py").write_text(RELU)
    (d / "level1" / "2_Cumsum.py").write_text(CUMSUM)
    return d


def _bench(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), TRITON_INTERPRET="1")
    return subprocess.run([sys.executable, str(ROOT / "benchmarks" / "kb_bench.py"), *args], capture_output=True,
                          text=True, env=env, timeout=900)


def test_the_cpu_path_writes_a_row_per_problem_and_resumes(tmp_path):
    folder, out = _folder(tmp_path), tmp_path / "out"
    r = _bench(str(folder), "--cpu", "--budget", "3", "--max-seeds", "2", "--concurrent", "2", "--out", str(out),
               "--method", "measure_all")
    assert r.returncode == 0, r.stderr[-3000:]
    rows = kb_bench.read_rows(out / kb_bench.ROWS)
    assert set(rows) == {"L1/1_ReLU_Scale", "L1/2_Cumsum"}
    for row in rows.values():
        assert row["correct_seed"] and row["correct"] and row["measurements"] == 3, row
        assert row["seed_kind"] in ("family", "generic") and row["gpu"] == "cpu"
    assert rows["L1/2_Cumsum"]["seed_kind"] == "generic"  # nothing of a scan lowers to a family
    # A second call with the rows of the first does nothing new and keeps them.
    out2 = tmp_path / "out2"
    r = _bench(str(folder), "--cpu", "--budget", "3", "--out", str(out2), "--resume", str(out / kb_bench.ROWS))
    assert r.returncode == 0 and "0 to do" in r.stderr
    assert kb_bench.read_rows(out2 / kb_bench.ROWS) == rows
    # The CPU path never writes a results file.
    assert not list(out2.glob("kb-corpus-*.json"))


def _row(pid, level, gpu="h200", **kw):
    return {"problem_id": pid, "level": level, "gpu": gpu, "budget": 32, **kw}


def test_metrics_and_the_summary_needs_every_problem_on_one_gpu():
    rows = [_row("L1/a", 1, correct_seed=True, correct=True, finished=True, best_over_eager=2.0,
                 best_over_compile=1.5, seed_kind="inductor"),
            _row("L1/b", 1, correct_seed=True, correct=True, finished=True, best_over_eager=1.0,
                 best_over_compile=0.5, seed_kind="generic"),
            _row("L2/c", 2, correct_seed=False, correct=False, finished=True, best_over_eager=None)]
    m = kb_bench.metrics(rows)
    assert m["problems"] == 3 and m["with_correct_seed"] == pytest.approx(2 / 3) and m["searched"] == 3
    assert m["best_over_eager_median"] == 1.5 and m["best_over_compile_median"] == 1.0
    assert m["share_beating_compile"] == 0.5 and m["seed_kinds"] == {"generic": 1, "inductor": 1, "none": 1}

    class P:
        def __init__(self, pid):
            self.id = pid

    class Args:
        method, forecaster, seed, folder = "screen_topk", "roofline", 0, "kb"

    problems = [P("L1/a"), P("L1/b"), P("L2/c")]
    by_id = {r["problem_id"]: r for r in rows}
    doc = kb_bench.summary(problems, by_id, Args)
    assert doc is not None and doc["gpu"] == "h200" and set(doc["metrics"]["by_level"]) == {"level1", "level2"}
    assert kb_bench.summary(problems + [P("L3/d")], by_id, Args) is None  # a problem without a row
    mixed = dict(by_id, **{"L2/c": dict(by_id["L2/c"], gpu="h100")})
    assert kb_bench.summary(problems, mixed, Args) is None  # rows from two GPU types
    other = dict(by_id, **{"L2/c": dict(by_id["L2/c"], commit="f" * 40)})
    assert kb_bench.summary(problems, other, Args) is None  # rows from two commits


def test_summarize_reads_the_rows_of_several_calls(tmp_path):
    """`--summarize` takes every call's rows file (as docs/problems.md writes it: c*/kb-rows.jsonl);
    a folder other than the corpus gets its summary in --out only."""
    folder, out = _folder(tmp_path), tmp_path / "out"
    sha = "a" * 40
    calls = []
    for i, pid in enumerate(("L1/1_ReLU_Scale", "L1/2_Cumsum"), 1):
        (tmp_path / f"c{i}").mkdir()
        calls.append(tmp_path / f"c{i}" / kb_bench.ROWS)
        calls[-1].write_text(json.dumps(_row(pid, 1, commit=sha, correct_seed=True, correct=True, finished=True,
                                             best_over_eager=1.0 + i, best_over_compile=0.5 * i,
                                             seed_kind="generic")) + "\n")
    r = _bench(str(folder), "--summarize", *map(str, calls), "--out", str(out))
    assert r.returncode == 0, r.stderr[-3000:]
    doc = json.loads((out / "kb-corpus-h200.json").read_text())
    assert set(doc["per_problem"]) == {"L1/1_ReLU_Scale", "L1/2_Cumsum"} and doc["commit"] == sha
    assert doc["metrics"]["best_over_eager_median"] == 2.5 and doc["metrics"]["problems"] == 2
    assert f"wrote {kb_bench.RESULTS}" not in r.stderr  # not the corpus: benchmarks/results/ untouched
    # One call's rows alone do not make a summary.
    r = _bench(str(folder), "--summarize", str(calls[0]), "--out", str(tmp_path / "out1"))
    assert r.returncode == 0 and "no summary" in r.stderr
    assert not (tmp_path / "out1" / "kb-corpus-h200.json").exists()


def test_resume_carries_rows_and_captures_of_this_commit_only(tmp_path):
    here, old = "a" * 40, "b" * 40
    same, other, unnamed = tmp_path / "same", tmp_path / "other", tmp_path / "unnamed"
    for d, c in ((same, here), (other, old), (unnamed, None)):
        d.mkdir()
        if c:
            (d / kb_bench.CALL).write_text(json.dumps({"commit": c}))
        kb_bench.append_row(d / kb_bench.ROWS, _row(f"L1/{d.name}", 1, commit=c))
        kb_bench.append_row(d / "kb-captures-gpu0.jsonl", {"problem_id": f"L1/{d.name}", "ok": True, "source": "s"})
    kb_bench.append_row(same / "kb-captures-gpu1.jsonl",
                        {"problem_id": "L1/died", "ok": False, "error": "capture process died (exit -9)"})
    kb_bench.append_row(same / "kb-captures-gpu1.jsonl", {"problem_id": "L1/failed", "ok": False, "error": "no graph"})
    paths = [d / kb_bench.ROWS for d in (same, other, unnamed)]
    rows, left_out = kb_bench.resumable(paths, here)
    assert set(rows) == {"L1/same"} and left_out == 2
    dest = tmp_path / kb_bench.RESUMED_CAPTURES
    assert kb_bench.carry_captures(paths, here, dest) == 2
    got = kb_bench.read_rows(dest)
    assert set(got) == {"L1/same", "L1/failed"} and got["L1/same"]["source"] == "s"   # a died capture is redone


FAKE_CAPTURE = '''import json, sys
todo, out, skip = sys.argv[1], sys.argv[2], set(filter(None, sys.argv[3].split(",")))
for line in open(todo):
    pid = json.loads(line)["id"]
    if pid in skip:
        continue
    if pid == "L1/3_dies":
        sys.exit(9)                      # dies before writing its row
    with open(out, "a") as f:
        f.write(json.dumps({"problem_id": pid, "ok": pid != "L1/2_poisons"}) + "\\n")
    if pid == "L1/2_poisons":
        sys.exit(%d)                     # its row is written; the context is gone
'''


def test_the_capture_restarts_after_a_lost_cuda_context_and_past_a_death(tmp_path):
    """A capture process that exits with EXIT_CONTEXT_LOST after a problem's row is started
    again for the problems after it (none of them marked as died); one that dies without a row
    gets that problem marked and the rest go on."""
    from types import SimpleNamespace

    from workbench.records import Problem

    script = tmp_path / "fake_capture.py"
    script.write_text(FAKE_CAPTURE % kb_bench.EXIT_CONTEXT_LOST)

    class Fake(kb_bench._Capture):
        def command(self, todo_file, skip):
            return [sys.executable, str(script), str(todo_file), str(self.out), ",".join(skip)]

    ids = ["L1/1_fine", "L1/2_poisons", "L1/3_dies", "L1/4_after"]
    problems = [Problem(id=i, level=1, name=i, source=RELU) for i in ids]
    out = tmp_path / "captures.jsonl"
    cap = Fake(SimpleNamespace(gpu=0, compile_threads=1), problems, out, None)
    cap.thread.join(timeout=120)
    assert not cap.alive()
    rows = kb_bench.read_rows(out)
    assert sorted(rows) == sorted(ids)
    assert rows["L1/2_poisons"]["ok"] is False and "error" not in rows["L1/2_poisons"]
    assert rows["L1/3_dies"]["error"] == "capture process died (exit 9)"
    assert rows["L1/4_after"]["ok"] is True and rows["L1/1_fine"]["ok"] is True


def test_the_device_script_runs_the_corpus_from_a_frozen_commit_and_resumes(tmp_path):
    """benchmarks/device/kb_corpus_calls.sh: `freeze` writes the committed tree and its commit;
    `call` runs kb_bench there (here the CPU smoke through KB_ARGS), its rows name the frozen
    commit, and a second call resuming from the first carries the row instead of searching again."""
    script = ROOT / "benchmarks" / "device" / "kb_corpus_calls.sh"
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    frozen = tmp_path / f"kb-{sha[:7]}"
    got = subprocess.run(["bash", str(script), "freeze", sha, str(frozen)], cwd=ROOT, capture_output=True, text=True)
    assert got.returncode == 0, got.stderr
    assert (frozen / "tree" / ".commit").read_text().strip() == sha
    assert (frozen / "tree" / "benchmarks" / "kb_bench.py").is_file()
    # What kb_bench does not read stays out (a device call carries 64 MiB in all).
    assert not any((frozen / "tree" / d).exists() for d in ("docs", "notebooks", "kernels_cache/landscapes",
                                                           "benchmarks/results", "benchmarks/device/runs"))
    env = {k: v for k, v in os.environ.items() if k not in ("WORKBENCH_COMMIT", "PYTHONPATH")}
    env.update(TRITON_INTERPRET="1", PYTHON=sys.executable, KB_ARGS="--cpu --limit 1 --budget 2 --no-inductor --workers 1")
    c1, c2 = tmp_path / "c1", tmp_path / "c2"
    c1.mkdir(), c2.mkdir()
    got = subprocess.run(["bash", str(script), "call", str(frozen), str(c1)], capture_output=True, text=True,
                         env=env, timeout=900)
    assert "kb_bench exit 0" in got.stdout, got.stdout + (c1 / "kb.log").read_text()[-3000:]
    rows = [json.loads(ln) for ln in (c1 / "kb-rows.jsonl").read_text().splitlines()]
    assert len(rows) == 1 and rows[0]["commit"] == sha and rows[0]["measurements"] == 2
    got = subprocess.run(["bash", str(script), "call", str(frozen), str(c2), str(c1)], capture_output=True,
                         text=True, env=env, timeout=900)
    assert "kb_bench exit 0" in got.stdout, (c2 / "kb.log").read_text()[-3000:]
    assert "1 done before, 0 to do" in (c2 / "kb.log").read_text()


def test_a_folder_where_nothing_loads_is_an_error(tmp_path):
    d = tmp_path / "kb" / "level1"
    d.mkdir(parents=True)
    (d / "1_broken.py").write_text("import not_a_module_anywhere\n")
    got = _bench(str(tmp_path / "kb"), "--cpu", "--out", str(tmp_path / "out"))
    assert got.returncode != 0 and "no problem of" in got.stderr and "1 files failed" in got.stderr
    got = _bench(str(tmp_path / "empty"), "--cpu", "--out", str(tmp_path / "out2"))
    assert got.returncode != 0 and "not a directory" in got.stderr and "Traceback" not in got.stderr
    (tmp_path / "empty" / "level1").mkdir(parents=True)
    got = _bench(str(tmp_path / "empty"), "--cpu", "--out", str(tmp_path / "out2"))
    assert got.returncode != 0 and "no problem files under" in got.stderr and "Traceback" not in got.stderr


class _StopAfter(threading.Event):
    """A stop that is set once the search has been asked `n` times whether to go on (the
    call's end, reached after the first steps)."""

    def __init__(self, n: int):
        super().__init__()
        self.n = n

    def is_set(self) -> bool:
        self.n -= 1
        if self.n < 0:
            self.set()
        return super().is_set()


def test_a_search_cut_by_the_calls_end_goes_on_in_the_next_call_without_measuring_again(tmp_path):
    """--carry-at-s in parts: a search stopped after its seeds is saved (save_inflight), a later
    call at the same commit unpacks it (load_inflight) and resumes it to its budget; the seeds'
    measurements are the ones of the first call, and the row counts both calls."""
    import argparse

    from workbench.execution.executors import ChunkedExecutor
    from workbench.execution.hardware import cpu_hardware
    from workbench.problems import load_dir
    from workbench.store import Store

    problems, errors = load_dir(_folder(tmp_path))
    assert not errors
    problem = next(p for p in problems if p.id == "L1/1_ReLU_Scale")
    args = argparse.Namespace(budget=4, method="measure_all", seed=0, max_seeds=2, forecaster="roofline")
    judge = kb_bench.JudgeTimes()
    ex = ChunkedExecutor(cpu_hardware(), device="cpu", workers=1, max_chunk=8, options={"time": True}, on_raw=judge)
    try:
        fc = kb_bench.make_forecaster(args, ex.hardware.key)
        live: dict = {}
        first = tmp_path / "first"
        first.mkdir()
        stop = _StopAfter(1)           # the seeds' step runs, the next does not
        assert kb_bench.search_row(problem, ex, fc, args, None, str(first), stop=stop, live=live) is None
        assert set(live) == {problem.id}
        with Store(live[problem.id]["store"]) as st:
            seeded = {m.candidate_id: m.speedup for m in st.measurements(problem_id=problem.id)}
        assert 1 <= len(seeded) < args.budget
        call1 = tmp_path / "c1"
        call1.mkdir()
        (call1 / kb_bench.CALL).write_text(json.dumps({"commit": kb_bench.this_commit()}))
        saved = kb_bench.save_inflight(live, call1 / "kb-inflight-cpu.tar.xz")
        assert saved == [problem.id]
        # An archive of another commit's call is not taken.
        other = tmp_path / "other"
        other.mkdir()
        (other / kb_bench.CALL).write_text(json.dumps({"commit": "f" * 40}))
        shutil.copy(call1 / "kb-inflight-cpu.tar.xz", other / "kb-inflight-cpu.tar.xz")
        got = kb_bench.load_inflight([other / kb_bench.ROWS, call1 / kb_bench.ROWS], kb_bench.this_commit(),
                                     tmp_path / "unpacked")
        assert set(got) == {problem.id} and got[problem.id]["calls"] == 1
        assert str(tmp_path / "unpacked") in got[problem.id]["store"]
        second = tmp_path / "second"
        second.mkdir()
        row = kb_bench.search_row(problem, ex, fc, args, None, str(second), carried=got[problem.id], live={},
                                  judge=judge)
    finally:
        ex.close()
    assert row is not None and row["calls"] == 2 and row["measurements"] == args.budget, row
    assert row["search_s"] >= got[problem.id]["search_s"]
    # Where the judge's time went, from the executor: one verdict per measurement (both calls ran
    # in this process here), with the timer's sessions and their waits for the lock.
    spent = row["judge_s"]
    assert sum(v for k, v in spent.items() if k.startswith("n_")) == args.budget, spent
    assert spent["session"] > 0 and spent["session"] >= spent["rounds"] and "lock" in spent
    with Store(second / Path(got[problem.id]["store"]).name) as st:
        after = {m.candidate_id: m.speedup for m in st.measurements(problem_id=problem.id)}
        kinds = [e["kind"] for s in st.searches() for e in st.events(s["id"])]
    assert len(after) == args.budget and all(after[c] == v for c, v in seeded.items())
    assert "resumed" in kinds


def test_in_flight_archives_stay_under_the_size_that_comes_back(tmp_path):
    """save_inflight leaves out the largest stores until the archive fits its limit."""
    import sqlite3

    live = {}
    for i, n in enumerate((1, 200)):
        f = tmp_path / f"s{i}.sqlite"
        con = sqlite3.connect(f)
        con.execute("CREATE TABLE t (x BLOB)")
        con.executemany("INSERT INTO t VALUES (?)", [(os.urandom(4096),) for _ in range(n)])
        con.commit()
        con.close()
        live[f"L1/p{i}"] = {"store": str(f), "search_id": f"s{i}", "t0": 0.0, "before_s": 0.0, "calls": 1}
    dest = tmp_path / "c" / "kb-inflight-gpu0.tar.xz"
    dest.parent.mkdir()
    (dest.parent / kb_bench.CALL).write_text(json.dumps({"commit": "a" * 40}))
    assert kb_bench.save_inflight(live, dest, max_bytes=200 * 1024) == ["L1/p0"]
    assert dest.stat().st_size <= 200 * 1024
    got = kb_bench.load_inflight([dest.parent / kb_bench.ROWS], "a" * 40, tmp_path / "u")
    assert set(got) == {"L1/p0"} and Path(got["L1/p0"]["store"]).is_file()


WRONG_SEED = '''import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _scale_relu(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(out_ptr + offs, tl.maximum(x, 0.0) * 3.0, mask=m)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        _scale_relu[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
        return out
'''


def test_a_row_says_why_each_seed_that_was_not_correct_failed(tmp_path):
    """A seed the judge finds incorrect (here an Inductor capture scaled by 3 where the
    reference scales by 2) is in the row's seed_errors with the judge's status and reason;
    the correct seeds are not."""
    import argparse

    from workbench.execution.executors import ChunkedExecutor
    from workbench.execution.hardware import cpu_hardware
    from workbench.problems import load_dir

    problems, errors = load_dir(_folder(tmp_path))
    assert not errors
    problem = next(p for p in problems if p.id == "L1/1_ReLU_Scale")
    args = argparse.Namespace(budget=3, method="measure_all", seed=0, max_seeds=3, forecaster="roofline")
    ex = ChunkedExecutor(cpu_hardware(), device="cpu", workers=1, max_chunk=8, options={"time": True})
    try:
        fc = kb_bench.make_forecaster(args, ex.hardware.key)
        row = kb_bench.search_row(problem, ex, fc, args, {"ok": True, "source": WRONG_SEED}, str(tmp_path))
    finally:
        ex.close()
    assert row is not None and row["inductor_seed"], row
    assert row["seeds"]["inductor#0"] is False and row["correct_seed"], row
    assert set(row["seed_errors"]) == {k for k, ok in row["seeds"].items() if not ok}, row
    assert row["seed_errors"]["inductor#0"].startswith("incorrect: "), row["seed_errors"]
