"""benchmarks/landscape_bench.py in its --cpu smoke mode: two shards, then the merge."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.landscape import read_landscapes
from bench_scripts import load_bench

ROOT = Path(__file__).resolve().parents[2]
bench = load_bench("landscape_bench")

ARGS = ["--cpu", "--problems", "L1/08_max_rows", "--max-points", "2"]


def test_a_shard_renders_only_its_points_in_the_landscapes_order():
    pids = ["L1/08_max_rows", "L1/13_rms_norm_bf16"]
    order = [c.id for land in bench.landscapes(pids, 40, 0, 0).values() for c in land.candidates]
    for i in range(3):
        assert [c.id for c in bench.shard_candidates(pids, 40, 0, 0, i, 3)] == order[i::3]


def test_rendering_in_processes_gives_the_same_candidates(monkeypatch):
    """Several processes, several jobs per problem: the same candidates, byte for byte, in the
    same order as rendering in this process."""
    monkeypatch.setattr(bench, "RENDER_CHUNK", 5)
    pids = ["L1/08_max_rows", "L1/13_rms_norm_bf16"]
    one = bench.shard_candidates(pids, 40, 0, 0, 1, 2, procs=1)
    many = bench.shard_candidates(pids, 40, 0, 0, 1, 2, procs=3)
    assert len(one) == 40 and [(c.id, c.source) for c in many] == [(c.id, c.source) for c in one]
    assert {c.problem_id for c in many} == set(pids)


def test_the_files_are_written_before_the_executor_closes(tmp_path, monkeypatch):
    """A call stopped while its executor closes (a long queue being cancelled) keeps its shard
    file and summary: both exist when close() is called."""
    seen = []
    real = bench._executor

    class Watched:
        def __init__(self, ex):
            self.ex = ex

        def __getattr__(self, name):
            return getattr(self.ex, name)

        def close(self):
            seen.append(sorted(p.name for p in (tmp_path / "out").iterdir()))
            self.ex.close()

    monkeypatch.setattr(bench, "_executor", lambda *a, **k: Watched(real(*a, **k)))
    assert bench.main(ARGS + ["--out", str(tmp_path / "out")]) == 0
    assert seen == [["landscape-cpu-shard0of1.jsonl", "landscape-summary-cpu-shard0of1.json"]]


def test_shards_then_merge(tmp_path):
    for i in (0, 1):
        assert bench.main(ARGS + ["--shard", f"{i}/2", "--out", str(tmp_path / f"s{i}")]) == 0
    s0 = json.loads((tmp_path / "s0" / "landscape-summary-cpu-shard0of2.json").read_text())
    assert s0["candidates"] == 1 and s0["measured"] == 1 and s0["scaling"] is None
    with pytest.raises(SystemExit, match="unmeasured"):  # one shard alone is not the landscape
        bench.main(["--cpu", "--merge", str(tmp_path / "s0"), "--gpu", "cpu", "--ship", str(tmp_path / "part")])
    # A second call of shard 0 with --resume finds nothing left to measure.
    assert bench.main(ARGS + ["--shard", "0/2", "--out", str(tmp_path / "again"),
                              "--resume", str(tmp_path / "s0" / "landscape-cpu-shard0of2.jsonl")]) == 0
    again = json.loads((tmp_path / "again" / "landscape-summary-cpu-shard0of2.json").read_text())
    assert again["measured"] == 0 and again["already_done"] == 1
    ship = tmp_path / "ship"
    assert bench.main(["--cpu", "--merge", str(tmp_path / "s0"), str(tmp_path / "s1"), "--gpu", "cpu",
                       "--ship", str(ship)]) == 0
    doc = json.loads((ship / "dataset-landscape-cpu.json").read_text())
    m = doc["metrics"]
    assert m["problems"] == 1 and m["heldout_problems"] == 1 and m["correct_rows"] == 2
    assert m["points_per_problem_median"] == 2 and m["ray_gpus"] is None and m["ray_scaling"] is None
    assert m["random_order_budget_to_best_median"] == doc["per_problem"]["L1/08_max_rows"]["random_order_budget_to_best"]
    assert not (bench.RESULTS_DIR / "dataset-landscape-cpu.json").exists()  # smoke output is never a result
    land = read_landscapes(ship)["L1/08_max_rows"]
    assert len(land.points) == 2 and len(land.candidates) == 2


def test_pilot_counts_the_shard_rows(tmp_path, monkeypatch):
    """--pilot: points, correct share and rate from the committed H100 pilot shard, counted from
    its rows (one incorrect row added here must show up)."""
    src = ROOT / "kernels_cache" / "landscapes" / "shards" / "h100"
    d = tmp_path / "shards"
    d.mkdir()
    for p in src.glob("*.json*"):   # the pilot's own files; later calls lie in subfolders
        (d / p.name).write_text(p.read_text())
    rows = (d / "landscape-h100-shard0of120.jsonl").read_text().splitlines()
    bad = json.loads(rows[0]) | {"candidate_id": "x" * 16, "status": "incorrect"}
    (d / "landscape-h100-shard0of120.jsonl").write_text("\n".join(rows + [json.dumps(bad)]) + "\n")
    monkeypatch.setattr(bench, "RESULTS_DIR", tmp_path)
    assert bench.main(["--pilot", str(d), "--gpu", "h100"]) == 0
    doc = json.loads((tmp_path / "landscape-pilot-h100.json").read_text())
    m = doc["metrics"]
    assert m["points_measured"] == len(rows) + 1 and m["correct"] == len(rows) - sum(
        json.loads(r)["status"] != "ok" for r in rows)
    assert m["statuses"].get("incorrect", 0) >= 1 and 0 < m["correct_share"] < 1
    assert doc["gpu"].startswith("NVIDIA") and doc["benchmark"] == "landscape-pilot"


def test_merge_reads_gzipped_shards_and_counts_only_whole_landscapes(tmp_path):
    """Calls may name different problems and store their rows gzipped; a landscape measured in
    part is listed but left out of the structure medians (it has no known best)."""
    import gzip
    full, part = tmp_path / "full", tmp_path / "part"
    assert bench.main(ARGS + ["--shard", "0/1", "--out", str(full)]) == 0
    raw = full / "landscape-cpu-shard0of1.jsonl"
    (full / "landscape-cpu-shard0of1.jsonl.gz").write_bytes(gzip.compress(raw.read_bytes()))
    raw.unlink()
    # A second call names another problem too, and measures one of its two points.
    assert bench.main(["--cpu", "--problems", "L1/13_rms_norm_bf16", "--max-points", "2", "--shard", "0/2",
                       "--out", str(part)]) == 0
    with pytest.raises(SystemExit, match="unmeasured"):
        bench.main(["--cpu", "--merge", str(full), str(part), "--gpu", "cpu", "--ship", str(tmp_path / "x")])
    ship = tmp_path / "ship"
    assert bench.main(["--cpu", "--merge", str(full), str(part), "--gpu", "cpu", "--ship", str(ship),
                       "--allow-partial"]) == 0
    doc = json.loads((ship / "dataset-landscape-cpu.json").read_text())
    m = doc["metrics"]
    assert m["problems_listed"] == 2 and m["problems"] == 1 and m["correct_rows"] == 3
    assert doc["per_problem"]["L1/13_rms_norm_bf16"]["unmeasured"] == 1
    assert m["random_order_budget_to_best_median"] == doc["per_problem"]["L1/08_max_rows"]["random_order_budget_to_best"]
    assert m["remeasured_points"] == 0 and m["remeasured_within_tie_share"] is None


def test_merge_reports_repeats_and_ships_the_later_row(tmp_path):
    """A candidate two calls measured is a repeat: the merge ships the later call's row and
    reports how far the two speedups lie apart."""
    a, b = tmp_path / "a", tmp_path / "b"
    assert bench.main(ARGS + ["--shard", "0/1", "--out", str(a)]) == 0
    b.mkdir()
    for p in a.iterdir():
        (b / p.name).write_text(p.read_text())
    rows = [json.loads(x) for x in (b / "landscape-cpu-shard0of1.jsonl").read_text().splitlines()]
    rows[0]["speedup"] *= 1.5    # far outside the 2% tie
    rows[0]["candidate_ms"] /= 1.5
    rows[1]["speedup"] *= 1.005  # inside it
    rows[1]["candidate_ms"] /= 1.005
    (b / "landscape-cpu-shard0of1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    ship = tmp_path / "ship"
    assert bench.main(["--cpu", "--merge", str(a), str(b), "--gpu", "cpu", "--ship", str(ship)]) == 0
    doc = json.loads((ship / "dataset-landscape-cpu.json").read_text())
    m, rep = doc["metrics"], doc["setup"]["remeasured"]
    assert m["remeasured_points"] == 2 and rep["both_correct"] == 2 and m["remeasured_within_tie_share"] == 0.5
    assert m["correct_rows"] == 2  # a repeat is one row, not two
    from workbench.dataset.shipped import load_shipped

    shipped = {m.candidate_id: m.speedup for m in load_shipped(ship).measurements}
    assert shipped == {r["candidate_id"]: pytest.approx(r["speedup"]) for r in rows}


@pytest.mark.parametrize("mode, want", [
    ("tasks", {"ray_mode": "tasks", "num_gpus": 2, "chunk_size": 64, "workers_per_task": 12, "max_retries": 2}),
    ("actors", {"ray_mode": "actors", "num_gpus": 2, "workers_per_gpu": 12}),
])
@pytest.mark.parametrize("unlocked", [False, True])
def test_each_ray_mode_gets_its_own_executor_options(mode, want, unlocked, monkeypatch):
    """The Ray executors take different options (chunks of tasks, workers per actor); whichever
    mode the app defaults to, the bench names its own mode and passes that mode's options;
    --compile-unlocked reaches the executor as the measurement option compile_unlocked."""
    import argparse

    seen = {}
    monkeypatch.setattr(bench, "make_executor", lambda target, **kw: seen.update(target=target, **kw))
    args = argparse.Namespace(cpu=False, local=False, ray_mode=mode, chunk=64, workers=12, timeout_s=90.0,
                              run_timeout_s=60.0, compile_unlocked=unlocked)
    want = want | {"options": {"compile_unlocked": unlocked}}
    bench._executor(args, 2)
    assert seen.pop("target") == "ray" and seen.pop("timeout_s") == 90.0 and seen.pop("run_timeout_s") == 60.0
    assert seen.pop("cache_root")
    assert seen == want
    # The options a mode gets are the ones its executor takes.
    from workbench.execution.ray_executor import RayActorExecutor, RayExecutor
    import inspect

    cls = RayActorExecutor if mode == "actors" else RayExecutor
    params = inspect.signature(cls.__init__).parameters
    assert all(k in params for k in want if k != "ray_mode")


def test_resume_tree_finds_every_shard_of_this_gpu_type(tmp_path):
    """--resume-tree DIR resumes from the shard files under DIR/<gpu>/ at any depth, plain or
    gzipped, and from no other GPU type's."""
    import argparse
    import gzip
    import shutil

    tree = tmp_path / "shards"
    for i in (0, 1):
        assert bench.main(ARGS + ["--shard", f"{i}/2", "--out", str(tmp_path / f"s{i}")]) == 0
    (tree / "cpu" / "call1").mkdir(parents=True)
    (tree / "cpu" / "call2" / "deeper").mkdir(parents=True)
    (tree / "h200").mkdir()
    raw = (tmp_path / "s0" / "landscape-cpu-shard0of2.jsonl").read_bytes()
    (tree / "cpu" / "call1" / "landscape-cpu-shard0of2.jsonl.gz").write_bytes(gzip.compress(raw))
    shutil.copy(tmp_path / "s1" / "landscape-cpu-shard1of2.jsonl", tree / "cpu" / "call2" / "deeper")
    (tree / "h200" / "landscape-h200-shard0of1.jsonl").write_text("not read: another GPU type\n")
    assert bench.main(ARGS + ["--out", str(tmp_path / "again"), "--resume-tree", str(tree)]) == 0
    s = json.loads((tmp_path / "again" / "landscape-summary-cpu-shard0of1.json").read_text())
    assert s["candidates"] == 2 and s["already_done"] == 2 and s["measured"] == 0

    args = argparse.Namespace(cpu=True, resume_tree=tree, resume=[], scaling=64, scaling_once=True)
    bench.resume_from_tree(args)
    assert len(args.resume) == 2 and args.scaling == 64         # no scaling summary yet
    (tree / "cpu" / "call1" / "landscape-scaling-cpu-summary.json").write_text("{}")
    bench.resume_from_tree(args)
    assert args.scaling == 0                                     # measured once already


def test_scaling_once_needs_the_tree(tmp_path):
    with pytest.raises(SystemExit):
        bench.main(ARGS + ["--out", str(tmp_path), "--scaling", "8", "--scaling-once"])


def test_heldout_first_puts_the_heldout_landscapes_ahead(tmp_path):
    protocol = bench.load_protocol(None)
    named = ["L1/01_softmax", "L1/08_max_rows", "L1/02_relu", "L1/13_rms_norm_bf16"]
    assert [protocol.is_heldout(p) for p in named] == [False, True, False, True]
    assert bench.main(["--cpu", "--problems", ",".join(named), "--max-points", "1", "--heldout-first",
                       "--out", str(tmp_path)]) == 0
    s = json.loads((tmp_path / "landscape-summary-cpu-shard0of1.json").read_text())
    assert s["problems"] == ["L1/08_max_rows", "L1/13_rms_norm_bf16", "L1/01_softmax", "L1/02_relu"]
    rows = [json.loads(x)["problem_id"] for x in (tmp_path / "landscape-cpu-shard0of1.jsonl").read_text().splitlines()]
    assert sorted(rows) == sorted(named)


def test_the_gpu_type_comes_from_nvidia_smi(tmp_path, monkeypatch):
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\necho 'NVIDIA H100 80GB HBM3'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert bench._machine_gpu_key(False) == "h100"
    fake.write_text("#!/bin/sh\nexit 9\n")
    with pytest.raises(SystemExit, match="nvidia-smi"):
        bench._machine_gpu_key(False)


def test_one_gpu_measures_no_scaling(tmp_path, monkeypatch):
    """On a machine of one GPU, --scaling is dropped: every candidate goes to one batch on that
    GPU and no scaling summary is written (which would stop --scaling-once on a later call of
    several GPUs)."""
    calls = []

    def fake_batch(cands, args, gpus, deadline, path, chunk=None, keep_open=False):
        calls.append((len(cands), gpus))
        return {"measured": 0, "of": len(cands), "elapsed_s": 0.0, "startup_s": 0.0, "per_min": None,
                "cut_by_budget": False, "hardware": {"key": "h100"}, "ids": []}

    monkeypatch.setattr(bench, "_visible_gpus", lambda: 1)
    monkeypatch.setattr(bench, "measure_batch", fake_batch)
    out = tmp_path / "out"
    assert bench.main(["--problems", "L1/08_max_rows", "--max-points", "3", "--scaling", "2",
                       "--out", str(out)]) == 0
    assert calls == [(3, 1)]
    assert not list(out.glob("landscape-scaling-*"))
    s = json.loads((out / "landscape-summary-h100-shard0of1.json").read_text())
    assert s["scaling"] is None and s["gpus"] == 1
