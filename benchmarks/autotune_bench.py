"""A forecaster inside Triton's autotuner, on the held-out landscape families: the kernel kept and
the autotune time saved by pruning to the forecaster's top k, against random pruning and full
autotuning, in the same run.

Problems: the held-out problems of the protocol (workbench/data/heldout_landscapes.toml). For each,
its configs are --configs points of its kernel family (every design choice, the algorithm
included: `workbench.landscape.autotune.family_map`), drawn by a seeded generator from the points
its landscape recorded as correct (a config that fails is a broken config, not a tuning choice),
the same for every arm. Triton's autotuner tunes a `FamilyLauncher`: a config's call renders
the point's candidate and runs its `ModelNew` on the problem's inputs, so what is timed is exactly
what the landscape measured and what the forecaster forecast. Arms, each a fresh
`triton.autotune(configs, key=[], prune_configs_by=...)` over fresh modules:
  full              every config benchmarked;
  forecaster@top<k> prune_configs_by={"perf_model": ForecastPerfModel, "top_k": k}, k in --top-k;
  random@top<k>     the same with RandomPerfModel (a uniformly random top k, --random-seeds draws):
                    the control.

Time. Compiling dominates a cold autotune, and compiling every arm cold would not fit one device
call, so each config is compiled ONCE, before the arms, in a pool of worker processes (one config
at a time per worker, into the run's Triton cache), and its compile time measured there
(`compile_s`: its first call minus its second, both synchronised). Every arm then runs with that
cache warm, and its cold-equivalent autotune time is
    autotune_s = forecast_s (forecaster arms: rendering and forecasting every config of the
                 problem in one batch, fresh, timed once per problem and charged to each arm)
               + tune_s (the arm's measured autotune wall time: pruning, loading, benchmarking)
               + sum of compile_s over the configs the arm benchmarked.
The chosen kernel's time is measured afterwards with triton.testing.do_bench, the same way for
every arm, and its output checked against the reference model's (rel_err).

Metrics, keyed "full", "forecaster@top<k>" and "random@top<k>", medians over problems (random: over
problems x draws), with 95% bootstrap intervals over problems:
- final_speed_vs_full_median: full's chosen kernel ms / the arm's chosen kernel ms (1.0: as fast);
- autotune_time_saved_share: 1 - the arm's autotune_s / full's autotune_s;
- landscape_speedup_vs_sample_best_median: the landscape's recorded speedup of the arm's chosen
  point / the best recorded speedup among the configs (replay truth beside the live timing).
"forecaster@top<k>" also carries vs_random (the paired differences to random@top<k>, per problem).

The forecaster is the landscape-trained learned forecaster of benchmarks/search_landscape.py (the
training landscapes' and kernels_cache/shipped's rows, every held-out problem's dropped; default
settings), fitted on a CPU beforehand and carried as a file, with its fit record (settings,
training problems and rows, the protocol file's hash) beside it:

    PYTHONPATH=. python benchmarks/autotune_bench.py --fit-only --model .device_carry/autotune-h200.joblib
    PYTHONPATH=. python benchmarks/autotune_bench.py --gpu h200 --model .device_carry/autotune-h200.joblib --out $OUT
    PYTHONPATH=. python benchmarks/autotune_bench.py --cpu --forecaster roofline   # interpreter smoke, no result

--cpu runs in-process in the Triton interpreter at the problems' CPU sizes with a few configs and
never writes a result file.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import commit, write_results  # noqa: E402

RESULTS_DIR = Path(__file__).parent / "results"
LANDSCAPES = ROOT / "kernels_cache" / "landscapes"
TOP_K = (4, 8, 16)
N_BOOT, BOOT_SEED = 10_000, 0
DEFINITIONS = {
    "final_speed_vs_full_median": "median over problems of full autotuning's chosen kernel ms / this arm's chosen "
                                  "kernel ms (triton.testing.do_bench): 1.0 = as fast",
    "autotune_time_saved_share": "median over problems of 1 - this arm's cold-equivalent autotune time / full "
                                 "autotuning's (forecast + measured warm tuning + the compile seconds of the configs "
                                 "it benchmarked, each measured once in the run's compile pass)",
    "landscape_speedup_vs_sample_best_median": "median over problems of the landscape's recorded speedup of the chosen "
                                               "point / the best recorded speedup among the problem's configs",
    "_ci": "95% percentile bootstrap of the median over problems (random: problem x draw units)",
}


# --------------------------------------------------------------------------- problem setup
def set_cache_dir(path: Path) -> None:
    """Point Triton's compile cache at `path` (the env var, and the knob where it exists)."""
    import triton

    os.environ["TRITON_CACHE_DIR"] = str(path)
    knobs = getattr(triton, "knobs", None)
    if knobs is not None and hasattr(knobs, "cache"):
        knobs.cache.dir = str(path)


def cpu_bench(fn: Callable[[], Any], quantiles=None, reps: int = 3):
    """Wall-clock timer for the interpreter smoke (ms; median, and the quantiles asked for)."""
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    med = statistics.median(times)
    return [med, min(times), max(times)] if quantiles else med


class Case:
    """One problem on a device: its loaded module, reference model (seeded), inputs, and the
    landscape's recorded speedups of its family points (NaN: failed)."""

    def __init__(self, pid: str, device: str, cpu: bool, speed: dict[str, float], point_ids: dict[str, str]):
        import torch

        from workbench.families import get_family
        from workbench.problems import get_problem
        from workbench.problems.loader import load_source

        self.pid, self.device, self.cpu = pid, device, cpu
        self.problem = get_problem(pid)
        self.family = get_family(pid)
        self.mod = load_source(self.problem.source, pid, cpu=cpu).module
        self.init = self.mod.get_init_inputs()
        torch.manual_seed(0)
        self.reference = self.mod.Model(*self.init).to(device)
        torch.manual_seed(1)
        with torch.device(device):
            self.inputs = [x.to(device) if hasattr(x, "to") else x for x in self.mod.get_inputs()]
        self.speed = speed
        self.point_ids = point_ids  # point key -> candidate id (the landscape's points table)

    def speed_of(self, point: tuple) -> float:
        return self.speed.get(self.point_ids.get(self.family.key(point), ""), math.nan)

    def arg_names(self) -> list[str]:
        return [f"x{i}" for i in range(len(self.inputs))]

    def launcher(self, workdir: Path):
        from workbench.landscape.autotune import FamilyLauncher

        return FamilyLauncher(self.family, workdir, self.arg_names(), self.init, self.reference, self.device)

    def sample(self, n: int, seed: int) -> list[tuple]:
        """`n` family points recorded correct, drawn by a generator seeded with the problem id (in
        the interpreter: the n with the smallest numeric parameters, the cheapest to interpret)."""
        ok = sorted(key for key, cid in self.point_ids.items() if math.isfinite(self.speed.get(cid, math.nan)))
        if self.cpu:
            pts = sorted((self.family.parse_key(k) for k in ok),
                         key=lambda pt: (sum(v for v in pt if isinstance(v, int)), self.family.key(pt)))
            return sorted(pts[:n])
        keys = random.Random(f"autotune:{self.pid}:{seed}").sample(ok, min(n, len(ok)))
        return sorted(self.family.parse_key(key) for key in keys)


# --------------------------------------------------------------------------- compile pass
_WORKER: dict[str, Any] = {}


def _compile_one(task: tuple[str, str, str, bool]) -> tuple[str, float, str]:
    """In a worker: compile and run one point of a problem once (first call minus second call,
    synchronised, in seconds), into the shared Triton cache. Returns (point key, compile_s, error)."""
    pid, key, workdir, cpu = task
    import torch

    case = _WORKER.get(pid)
    if case is None:
        _WORKER.clear()  # one problem's inputs at a time
        case = _WORKER[pid] = Case(pid, "cpu" if cpu else "cuda", cpu, {}, {})
    launcher = case.launcher(Path(workdir))
    values = launcher.map.config_values(case.family.parse_key(key))
    sync = torch.cuda.synchronize if not cpu else (lambda: None)
    try:
        t0 = time.perf_counter()
        launcher.run(*case.inputs, **values)
        sync()
        t1 = time.perf_counter()
        launcher.run(*case.inputs, **values)
        sync()
        t2 = time.perf_counter()
    except Exception as e:  # noqa: BLE001 - a config that fails here is reported, not fatal
        return key, math.nan, f"{type(e).__name__}: {str(e)[:300]}"
    return key, max(0.0, (t1 - t0) - (t2 - t1)), ""


def _init_worker(cache: str, cpu: bool) -> None:
    if cpu:
        os.environ["TRITON_INTERPRET"] = "1"
    set_cache_dir(Path(cache))


def compile_pass(tasks: list[tuple[str, str, str, bool]], workers: int, cache: Path, cpu: bool
                 ) -> dict[tuple[str, str], tuple[float, str]]:
    """compile_s (and error) of every (problem, point key), in `workers` processes (in-process
    for the interpreter or one worker)."""
    out: dict[tuple[str, str], tuple[float, str]] = {}
    if cpu or workers <= 1:
        _init_worker(str(cache), cpu)
        for t in tasks:
            key, s, err = _compile_one(t)
            out[(t[0], key)] = (s, err)
        return out
    import multiprocessing as mp

    with ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn"), initializer=_init_worker,
                             initargs=(str(cache), cpu)) as pool:
        for t, (key, s, err) in zip(tasks, pool.map(_compile_one, tasks, chunksize=1)):
            out[(t[0], key)] = (s, err)
    return out


# --------------------------------------------------------------------------- arms
def arm(case: Case, points: list[tuple], perf_model, top_k: int | None, workdir: Path,
        compile_s: dict[str, float], forecast_s: float = 0.0) -> dict[str, Any]:
    """One autotune of `points` (pruned to top_k by perf_model unless None) over fresh modules,
    with the cache warm; returns its times (`forecast_s`: what forecasting the configs cost,
    charged to the arm), the chosen point and its kernel time."""
    import torch
    import triton

    launcher = case.launcher(workdir)
    configs = launcher.map.configs(points)
    prune = {"perf_model": perf_model, "top_k": top_k} if perf_model is not None else None
    kw: dict[str, Any] = {"do_bench": cpu_bench} if case.cpu else {}
    tuned = triton.autotune(configs=configs, key=[], prune_configs_by=prune, **kw)(launcher)
    sync = torch.cuda.synchronize if not case.cpu else (lambda: None)
    sync()
    t0 = time.perf_counter()
    with torch.no_grad():
        tuned.run(*case.inputs)
    sync()
    tune_s = time.perf_counter() - t0
    best = launcher.map.point(tuned.best_config.all_kwargs())
    # compiled: every config Triton benchmarked, and the one it runs (a lone config is not benchmarked)
    benched = [launcher.map.point(c.all_kwargs()) for c in (getattr(tuned, "configs_timings", None) or {})]
    keys = list(dict.fromkeys([case.family.key(pt) for pt in benched] + [case.family.key(best)]))

    def call():
        with torch.no_grad():
            return tuned.run(*case.inputs)

    kernel_ms = cpu_bench(call) if case.cpu else float(triton.testing.do_bench(call))
    with torch.no_grad():
        out, ref = call(), case.reference(*case.inputs)
    err = float((out.float() - ref.float()).abs().max() / (ref.float().abs().max() + 1e-6))
    compiled = sum(compile_s.get(k, 0.0) for k in keys)
    return {"autotune_s": forecast_s + tune_s + compiled, "forecast_s": forecast_s, "tune_s": tune_s,
            "compile_s": compiled, "benchmarked": len(benched), "compiled": len(keys), "best": case.family.key(best),
            "kernel_ms": kernel_ms, "rel_err": err, "landscape_speedup": case.speed_of(best),
            "first_call_s_max": max(launcher.first_call_s.values(), default=0.0)}


def run_problem(case: Case, forecaster, hardware, points: list[tuple], top_ks: Sequence[int], random_seeds: int,
                seed: int, workdir: Path, compile_s: dict[str, float]) -> dict[str, Any]:
    """Every arm over `points` (the problem's configs) with the cache warm (`compile_s`: each
    config's compile seconds, from the compile pass)."""
    from workbench.landscape.autotune import ForecastPerfModel, RandomPerfModel, family_map

    mapping = family_map(case.family)
    row: dict[str, Any] = {"problem_id": case.pid, "configs": len(points),
                           "compile_s_total": sum(compile_s.get(case.family.key(p), 0.0) for p in points)}
    # What the forecaster costs on this problem: every config rendered and forecast, one batch,
    # fresh (per-problem setup included); each pruned arm is charged all of it.
    pm = ForecastPerfModel(forecaster, case.problem, hardware, mapping)
    t0 = time.perf_counter()
    pm.prefetch(points)
    row["forecast_s"] = forecast_s = time.perf_counter() - t0
    row["full"] = arm(case, points, None, None, workdir, compile_s)
    for k in top_ks:
        row[f"forecaster@top{k}"] = arm(case, points, pm, k, workdir, compile_s, forecast_s)
        for s in range(random_seeds):
            row[f"random@top{k}#{s}"] = arm(case, points, RandomPerfModel(seed * 1000 + s, case.family.param_names), k,
                                           workdir, compile_s)
    best = max((case.speed_of(p) for p in points), default=math.nan)
    for name, a in list(row.items()):
        if isinstance(a, dict) and "kernel_ms" in a:
            a["speed_vs_full"] = row["full"]["kernel_ms"] / a["kernel_ms"]
            a["time_saved_share"] = 1 - a["autotune_s"] / row["full"]["autotune_s"]
            a["landscape_vs_sample_best"] = a["landscape_speedup"] / best if best > 0 else math.nan
    return row


# --------------------------------------------------------------------------- metrics
def _median_ci(x: Sequence[float]) -> list[float] | None:
    v = np.asarray([a for a in x if math.isfinite(a)], dtype=float)
    if len(v) < 2:
        return None
    idx = np.random.default_rng(BOOT_SEED).integers(0, len(v), size=(N_BOOT, len(v)))
    lo, hi = np.quantile(np.median(v[idx], axis=1), [0.025, 0.975])
    return [float(lo), float(hi)]


def _med(x: Sequence[float]) -> float | None:
    v = [a for a in x if math.isfinite(a)]
    return float(statistics.median(v)) if v else None


def metrics(rows: list[dict[str, Any]], top_ks: Sequence[int]) -> dict[str, Any]:
    out: dict[str, Any] = {"problems": len(rows),
                           "full": {"autotune_s_median": _med([r["full"]["autotune_s"] for r in rows]),
                                    "compile_s_median": _med([r["full"]["compile_s"] for r in rows])}}
    for k in top_ks:
        for kind in ("forecaster", "random"):
            arms = [a for r in rows for n, a in r.items() if n == f"{kind}@top{k}" or n.startswith(f"{kind}@top{k}#")]
            sp, saved = [a["speed_vs_full"] for a in arms], [a["time_saved_share"] for a in arms]
            land = [a["landscape_vs_sample_best"] for a in arms]
            out[f"{kind}@top{k}"] = {
                "final_speed_vs_full_median": _med(sp), "final_speed_vs_full_median_ci": _median_ci(sp),
                "autotune_time_saved_share": _med(saved), "autotune_time_saved_share_ci": _median_ci(saved),
                "landscape_speedup_vs_sample_best_median": _med(land), "arms": len(arms),
                "within_1pct_of_full_share": sum(s >= 0.99 for s in sp) / len(sp) if sp else None}
        diffs = []
        for r in rows:
            rnd = [a["speed_vs_full"] for n, a in r.items() if n.startswith(f"random@top{k}#")]
            if rnd:
                diffs.append(r[f"forecaster@top{k}"]["speed_vs_full"] - statistics.fmean(rnd))
        out[f"forecaster@top{k}"]["vs_random_speed_diff_median"] = _med(diffs)
        out[f"forecaster@top{k}"]["vs_random_speed_diff_median_ci"] = _median_ci(diffs)
    return out


# --------------------------------------------------------------------------- forecaster
def fit_forecaster(gpu: str, train_data: Sequence[Path], protocol) -> tuple[Any, dict[str, Any]]:
    """The landscape-trained learned forecaster (search_landscape.py's fit, same rows and settings)."""
    import search_landscape as sl

    from search_control import protocol_factory

    records = sl.training_records(LANDSCAPES / gpu, train_data, gpu, protocol)
    t0 = time.time()
    fc = protocol_factory(sl.FORECASTERS["learned"], protocol)(records, "")
    return fc, {**sl.fit_record("learned", records, protocol), "fit_s": round(time.time() - t0, 1),
                "train_data": [str(p) for p in train_data], "landscapes": str(LANDSCAPES / gpu), "gpu": gpu}


def warm_up(forecaster, hardware, problem_id: str = "L1/01_softmax") -> None:
    """One forecast of a training problem's point before anything is timed: the process's one-time
    imports are not a cost of any held-out problem's tuning."""
    from workbench.families import get_family
    from workbench.problems import get_problem

    fam = get_family(problem_id)
    forecaster.forecast_batch([(get_problem(problem_id), fam.candidate(fam.points()[0]))], hardware,
                              relative_to="reference")


def landscape_truth(directory: Path, gpu: str, pids: Sequence[str]) -> tuple[dict[str, float], dict[str, dict[str, str]]]:
    """The landscape's recorded speedups (NaN: failed) and, per problem, point key -> candidate id
    (read from the tables directly: rendering every point would take longer than the tuning)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    k = pq.read_table(directory / "kernels.parquet", columns=["candidate_id", "hardware_key", "status", "speedup"])
    k = k.filter(pc.equal(k["hardware_key"], gpu)).to_pylist()
    speed = {r["candidate_id"]: (float(r["speedup"]) if r["status"] == "ok" and r["speedup"] else math.nan) for r in k}
    pts = pq.read_table(directory / "points.parquet", columns=["problem_id", "point_key", "candidate_id"]).to_pylist()
    ids: dict[str, dict[str, str]] = {pid: {} for pid in pids}
    for r in pts:
        if r["problem_id"] in ids:
            ids[r["problem_id"]][r["point_key"]] = r["candidate_id"]
    return speed, ids


def load_forecaster(path: Path) -> tuple[Any, dict[str, Any]]:
    """A forecaster saved by --fit-only and its fit record (the JSON beside it)."""
    from workbench.forecast.learned import LearnedForecaster

    meta = Path(str(path) + ".json")
    if not meta.exists():
        raise SystemExit(f"{meta}: no fit record beside the model; write both with --fit-only")
    return LearnedForecaster.load(path), json.loads(meta.read_text())


def _clean(x: Any) -> Any:
    """NaN and inf as null, so the file is strict JSON."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


def main(argv=None) -> int:
    from workbench.landscape import load_protocol

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpu", default="h200")
    ap.add_argument("--problems", default=None, help="default: the protocol's held-out problems")
    ap.add_argument("--configs", type=int, default=48, help="family points (autotune configs) per problem")
    ap.add_argument("--top-k", default=",".join(map(str, TOP_K)))
    ap.add_argument("--random-seeds", type=int, default=1, help="random pruning draws per problem and k")
    ap.add_argument("--forecaster", choices=("learned", "roofline"), default="learned")
    ap.add_argument("--model", type=Path, default=None, help="a learned forecaster saved by --fit-only")
    ap.add_argument("--fit-only", action="store_true", help="fit the forecaster, save it to --model, and stop")
    ap.add_argument("--train-data", type=Path, nargs="*", default=[ROOT / "kernels_cache" / "shipped"])
    ap.add_argument("--fit-cache", default=None, help="the fitted-forecaster cache folder (--fit-only; default: the user's)")
    ap.add_argument("--workers", type=int, default=max(1, min(14, (os.cpu_count() or 2) - 2)),
                    help="processes of the compile pass")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-seconds", type=float, default=440.0, help="start no new problem after this many seconds")
    ap.add_argument("--cpu", action="store_true", help="smoke: interpreter, CPU sizes, few configs, no result file")
    ap.add_argument("--out", type=str, default=None)
    args = ap.parse_args(argv)
    t_start = time.time()
    protocol = load_protocol()
    if args.cpu:
        os.environ["TRITON_INTERPRET"] = "1"
    if args.fit_only:
        if args.model is None:
            ap.error("--fit-only needs --model PATH")
        import search_landscape

        search_landscape.FIT_CACHE[0] = args.fit_cache
        fc, fit = fit_forecaster(args.gpu, args.train_data, protocol)
        fc.__dict__.pop("fit", None)  # the protocol guard (a closure) is not saved: the file is fitted
        args.model.parent.mkdir(parents=True, exist_ok=True)
        fc.save(args.model)
        Path(str(args.model) + ".json").write_text(json.dumps(fit, indent=1) + "\n")
        print(f"wrote {args.model} ({args.model.stat().st_size / 2**20:.1f} MiB) and its fit record", file=sys.stderr)
        return 0
    pids = [p for p in (args.problems.split(",") if args.problems else protocol.heldout) if p]
    top_ks = [int(k) for k in args.top_k.split(",") if k]
    if not top_ks or min(top_ks) < 1 or max(top_ks) >= args.configs:
        ap.error("need 1 <= every --top-k < --configs (pruning must leave something out)")
    if args.forecaster == "roofline":
        from workbench.forecast.roofline import RooflineForecaster

        forecaster, fit = RooflineForecaster(), {"forecaster": "roofline", "protocol_sha256": protocol.sha256}
    elif args.model is not None:
        forecaster, fit = load_forecaster(args.model)
    else:
        forecaster, fit = fit_forecaster(args.gpu, args.train_data, protocol)
    if fit.get("protocol_sha256") != protocol.sha256:
        raise SystemExit(f"the forecaster was fitted under protocol {fit.get('protocol_sha256')}, this tree's is "
                         f"{protocol.sha256}: refit it (--fit-only)")
    protocol.check_fit(fit.get("training_problems", []), "the autotune forecaster's training set")
    from workbench.records import Hardware

    hardware = Hardware(key=args.gpu, name=args.gpu if not args.cpu else f"{args.gpu} (interpreter smoke)",
                        kind="replay")
    speed, point_ids = landscape_truth(LANDSCAPES / args.gpu, args.gpu, pids)
    device = "cpu" if args.cpu else "cuda"
    warm_up(forecaster, hardware)
    rows, skipped, failed = [], [], {}
    with tempfile.TemporaryDirectory(prefix="autotune_bench_") as tmp:
        work, cache = Path(tmp) / "points", Path(tmp) / "triton_cache"
        work.mkdir()
        set_cache_dir(cache)
        cases = {pid: Case(pid, device, args.cpu, speed, point_ids[pid]) for pid in pids}
        samples = {pid: c.sample(args.configs, args.seed) for pid, c in cases.items()}
        t0 = time.time()
        tasks = [(pid, c.family.key(pt), str(work), args.cpu) for pid, c in cases.items() for pt in samples[pid]]
        compiled = compile_pass(tasks, args.workers, cache, args.cpu)
        compile_pass_s = round(time.time() - t0, 1)
        for (pid, key), (_, err) in compiled.items():
            if err:
                failed.setdefault(pid, {})[key] = err
        for pid, case in cases.items():
            if time.time() - t_start > args.max_seconds:
                skipped.append(pid)
                continue
            cs = {key: s for (p, key), (s, err) in compiled.items() if p == pid and not err}
            keep = [pt for pt in samples[pid] if case.family.key(pt) in cs]
            row = run_problem(case, forecaster, hardware, keep, top_ks, args.random_seeds, args.seed, work, cs)
            rows.append(row)
            print(f"{pid}: full {row['full']['autotune_s']:.1f}s {row['full']['kernel_ms']:.3f} ms; "
                  + ", ".join(f"top{k} {row[f'forecaster@top{k}']['speed_vs_full']:.3f}x "
                              f"(saved {row[f'forecaster@top{k}']['time_saved_share']:.2f})" for k in top_ks),
                  file=sys.stderr)
    doc = {"benchmark": "autotune", "gpu": args.gpu, "date": time.strftime("%Y-%m-%d"), "commit": commit(),
           "metrics": metrics(rows, top_ks), "definitions": DEFINITIONS,
           "setup": {"forecaster": args.forecaster, "fit": fit, "protocol": protocol.describe(),
                     "configs": args.configs, "top_k": top_ks, "random_seeds": args.random_seeds, "seed": args.seed,
                     "workers": args.workers, "compile_pass_s": compile_pass_s, "config_failures": failed,
                     "skipped_for_time": skipped, "cpu": args.cpu, "seconds": round(time.time() - t_start, 1)},
           "rows": rows}
    doc = _clean(doc)
    if args.cpu:
        print(json.dumps(doc["metrics"], indent=1, default=float))
        print("smoke run (--cpu): no result file", file=sys.stderr)
        return 0
    full = not skipped and set(pids) == set(protocol.heldout)
    for p in write_results(RESULTS_DIR, f"autotune-{args.gpu}.json", json.dumps(doc, indent=1, default=float) + "\n",
                           full, args.out, "a partial run is not a result: pass --out DIR to keep it"):
        print(f"wrote {p}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
