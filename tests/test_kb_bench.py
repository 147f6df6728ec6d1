"""benchmarks/kb_bench.py: the CPU path end to end on a small KernelBench-layout folder (import,
seed, search, one row per problem, resume), and the summary's metrics and completeness rule."""
from __future__ import annotations

import json
import os
import subprocess
import sys
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
