"""Search methods at equal GPU budget, in replay mode on shipped measurements.

For each problem (>= 10) and seed (>= 5) every method runs a search with the same GPU budget,
answered from recorded measurements (CacheExecutor) with candidates from the replay cache
(ReplayGenerator). The forecaster never sees the searched problem's measurements: the learned
forecaster is fitted leave-one-problem-out.

Metrics per method. The two target keys are aggregated by problem, as the targets read ("at equal
budget end at or above it on >= 70% of problems", "<= 50% of its GPU measurements (median over
problems)"); each has a per-run twin:
- final_best_speedup_median: median over problem x seed runs of the best measured speedup at the
  full budget (0 when none correct).
- win_or_tie_rate_equal_budget: share of problems won: a problem counts as won when the median over
  its seeds of (final best / measure_all's final best on the same seed) is at least 1, or within
  the tie tolerance below 1 (see "Ties"). win_or_tie_run_rate: the share of runs whose final best
  is >= measure_all's on the same problem and seed (same tolerance).
- budget_fraction_to_match_median: median over problems of the median over the problem's seeds of
  (GPU measurements until the best reaches measure_all's median final best on that problem, or
  comes within the tie tolerance of it) / budget; a run that never matches counts as infinite, and
  a median is null when more than half never match. budget_fraction_to_match_run_median: the
  median over all runs instead. `match_rate` gives the share of runs that matched.

The random-score control (benchmarks/search_control.py). Replay also runs every method that uses
forecasts as `<method>[random]`: the same method, budget, seeds, k, m and pools with each child's
forecast replaced by seeded random bin probabilities (a uniformly random ranking), scored with the
keys above. Each method then carries `vs_random_diff`: the mean over problem x seed pairs of the
control's budget fraction to reach measure_all's median final best minus the method's (a run that
never reaches it counts as (budget + 1) / budget; positive: the forecaster saves budget over
random scores), `vs_random_diff_ci` (95% bootstrap over problem x seed pairs), `vs_random_pairs`
and the shares of pairs where the method needed less / the same / more. The reach rule is the
section's (exact in metrics.<method>, within tie_rel in metrics.replay_tolerant) and is written
into `setup.vs_random`. `--add-controls` adds the controls to a recorded replay file at its
recorded settings without re-fitting the forecaster (after checking that measure_all, which reads
no forecasts, replays the recorded runs exactly on --data, i.e. the pools are the same):

    python benchmarks/search_bench.py --add-controls --gpu h100 --jobs 1

Searches adapt their forecasts to their own measurements (SearchRun's adapt_forecasts, the
default; `--no-adapt` turns it off, recorded as setup.adapt_forecasts). Each recorded run keeps its
best speedup, GPU measurements, candidates considered, `trusted` (forecasts that stood in for a
measurement; runs recorded before this key existed lack it) and its best-so-far curve. `--jobs N`
runs N problems at once in worker processes, with the same results as one job.

    python benchmarks/search_bench.py --data kernels_cache/shipped --gpu h100 --budget 16 --seeds 5 --k 2 --m 3 --jobs 16

(the settings of the committed search-h100.json).

writes benchmarks/results/search-<gpu>.json ({"benchmark", "gpu", "date", "commit", "metrics"}).
Only real shipped data may be written there; the tests run the same code on synthetic pools.

Live mode measures on a real GPU (LocalGPUExecutor, one executor shared by all runs; each run
measures its own candidates, so every method's GPU budget is exact), with zoo seeds and mutation
children, and the learned forecaster fitted on the shipped H100 rows of the other problems:

    PYTHONPATH=. python benchmarks/search_bench.py --live --gpu cuda:0 --budget 16 --k 2 --m 3 \
        --problems L1/09_mean_cols,L1/22_maxpool2d,L2/02_linear_bias_gelu_bf16 --seeds 1 \
        --parallel 12 --budget-s 200 --deadline-s 470 --out DIR

(the settings of the committed live runs, one of their calls; size `--parallel` and
`--deadline-s` so the runs fit the call's time limit; `--methods` and `--seed-offset` complete
what a time-guarded call skipped).

`--parallel N` searches up to N runs at once, started in plan order (one thread and Store each,
the executor and each problem's forecaster, fitted once, shared), so several
runs' candidates keep the executor's workers busy; `--seed-offset
S` runs seeds S..S+seeds-1. A live call ADDS its runs to the live runs recorded in
search-<gpu type>.json (`live.runs`; a run of the same problem, method and seed replaces the
recorded one) when the settings (budget, k, m, max_seeds, forecaster, generator, adapt_forecasts,
policy, uncertainty_aware_rule) match (a call may run a subset of the methods; `live.methods` is
the union), and refuses before measuring anything when they differ, unless `--replace-live` is
given. `--archive-as NAME` handles a change of a setting that concerns one method only
(`METHOD_SETTINGS`: uncertainty_aware's trust rule, `uncertainty_aware_rule`): the live section
is copied as it is to `live_NAME` (an archived section, scored as below), that method's live runs
are dropped from `live` and later calls add them anew under the new rule, while the other
methods' runs stay (`live.restarted` records when). Each call's provenance (commit, date,
device, seeds, hardware fingerprint, wall clock, runs added, replaced, skipped, failed) is
appended to `live.calls`; each run carries its call's index. The merged file goes to
benchmarks/results/ and to DIR. `--gpu cpu` (interpreter, a smoke test) writes only
DIR/search-cpu.json and never merges.

Ties. Replay answers a kernel with its recorded speedup, so two runs that find the same kernel
tie exactly and replay uses tie_rel = 0. Live mode re-measures, so the same kernel found by two
runs differs by measurement noise: a live run ties when its best is at most tie_rel below the one
it is compared with, where tie_rel = the median relative difference between two measurements of
the same candidate by the current executor on that GPU type, in two worker processes
(benchmarks/results/executor-<gpu>.json, metrics.cross_process_diff_pct_median / 100; none
recorded for the GPU type: ties are strict). Replay reports exact ties in `metrics.<method>` and
ties within the same tolerance in `metrics.replay_tolerant` (different kernels recorded within one
measurement's repeat difference of each other are not told apart), and keeps every run in
`replay_runs`. `live.tie_rel` and `live.tie_rel_source`
record the value and its file. Both are reported, over the problem x seed pairs on which every
method completed, recomputed over all recorded runs at each call: `metrics.live` with tie_rel
(the tolerant metrics) and `metrics.live_strict` with tie_rel = 0, with the same keys.
`--rescore` (no GPU) recomputes both, `live.per_problem`, the replay metrics and those of
archived live sections (`live_<name>`: runs taken under earlier settings) from the recorded runs,
e.g. once the executor benchmark of that GPU type has been re-run.
"""
from __future__ import annotations

import argparse
import copy
import json
import math
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Sequence

from tqdm import tqdm

from workbench.errors import ConfigError, WorkbenchError
from workbench.execution.executors import CacheExecutor
from workbench.records import Problem
from workbench import compose
from workbench.search import ReplayGenerator, best_curve, make_method
from workbench.spec import ForecasterChoice, MethodChoice, SearchSpec, Target
from workbench.spec.registry import DEFAULTS, forecaster_names
from workbench.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import commit  # noqa: E402
from search_control import (SURROGATE_METHODS, RandomScoreForecaster, control_name, first_reach,  # noqa: E402
                            split_control, tie_floor, vs_random)
from search_control import rule as control_rule  # noqa: E402

RESULTS_DIR = Path(__file__).parent / "results"
METHODS = ("measure_all", "screen_topk", "selective", "uncertainty_aware")
#: Replay runs every method and each surrogate method's random-score control (search_control.py).
CONTROLS = tuple(control_name(m) for m in SURROGATE_METHODS)
REPLAY_METHODS = METHODS + CONTROLS
BASELINE = "measure_all"
MIN_PROBLEMS, MIN_SEEDS = 10, 5

#: (records, held-out problem id) -> forecaster
ForecasterFactory = Callable[[Any, str], Any]


def learned_factory(records, held_out: str):
    """LearnedForecaster fitted on every problem except `held_out`."""
    from workbench.forecast.learned import LearnedForecaster

    ms = [m for m in records.measurements if m.problem_id != held_out]
    # The committed search results were run with the estimated reference time (the default
    # before the measured one); kept so they reproduce. Not re-run with the measured one.
    return LearnedForecaster(reference_time="estimate").fit(records.problems, records.candidates, ms)


def roofline_factory(records, held_out: str):
    from workbench.forecast.roofline import RooflineForecaster

    return RooflineForecaster()


def bench_spec(problem_id: str, target: Target | str, budget: int, k: int, m: int, forecaster: str = "learned",
               adapt: bool = True, max_seeds: int = int(DEFAULTS["max_seeds"]),  # type: ignore[arg-type]
               reference_time: str = "estimate") -> SearchSpec:
    """The base spec of a benchmark's searches of one problem (measure_all, seed 0); its runs are
    `spec.replace(method=..., seed=...)`. `reference_time` describes the learned forecaster's
    (`learned_factory` and `h100_factory` fit with the estimated one)."""
    choice = ForecasterChoice(forecaster, reference_time=reference_time, adapt=adapt)
    return SearchSpec(problem_id, target=target, forecaster=choice, method=MethodChoice(BASELINE, k, m),
                      budget=budget, max_seeds=max_seeds)


def search_once(store, spec: SearchSpec, problem: Problem, executor, generator, forecaster,
                method_kw: dict | None = None, stop_when: Callable[[], bool] | None = None) -> dict[str, Any]:
    """One search of `spec` (compose.build) with the given executor, generator and forecaster
    object (None: none); returns its summary plus the best-so-far curve. `stop_when()`, asked
    after each step, ends the search early when it returns True; "finished" is False when the
    search was ended so."""
    run = compose.build(spec, store, problem=problem, executor=executor, generator=generator,
                        forecaster=forecaster, method_options=method_kw)
    while run.step() and not (stop_when is not None and stop_when()):
        pass
    summary = run.summary()
    return {"finished": summary["finished"], "problem_id": problem.id, "method": spec.method.name,
            "seed": spec.seed, "budget": spec.budget,
            "best_speedup": summary["best_speedup"] or 0.0, "gpu_measurements": summary["gpu_measurements"],
            "considered": summary["candidates_considered"], "trusted": summary["trusted"],
            "finish_reason": summary["finish_reason"],
            "curve": best_curve(store.events(run.search_id))}


def run_one(store, problem: Problem, records, spec: SearchSpec, method: str, forecaster,
            method_kw: dict | None = None) -> dict[str, Any]:
    """One replayed search of `spec` (target replay:KEY) run as `method`, answered from `records`;
    returns its summary plus the best-so-far curve. A control method (`screen_topk[random]`) runs
    its base method with `RandomScoreForecaster(seed)` instead of `forecaster` and is recorded
    under its own name."""
    base, control = split_control(method)
    spec = spec.replace(method=base)
    if control is not None:
        forecaster = RandomScoreForecaster(spec.seed)
    hardware_key = spec.target.key
    ms = [x for x in records.measurements if x.problem_id == problem.id and x.hardware_key == hardware_key]
    ex = CacheExecutor(ms, hardware_key)
    cands = [c for c in records.candidates if c.problem_id == problem.id]
    r = search_once(store, spec, problem, ex, ReplayGenerator(cands, ex.candidate_ids), forecaster, method_kw)
    r.pop("finished")  # a replayed search always runs to its end
    r["method"] = method
    return r


def eligible_problems(records, hardware_key: str, budget: int) -> list[Problem]:
    """Problems with more cached measurements on `hardware_key` than the budget (so the budget binds)."""
    counts: dict[str, int] = {}
    for x in records.measurements:
        if x.hardware_key == hardware_key:
            counts[x.problem_id] = counts.get(x.problem_id, 0) + 1
    return [p for p in records.problems if counts.get(p.id, 0) > budget]


def _problem_runs(records, problem: Problem, hardware_key: str, budget: int, seeds: Sequence[int],
                  forecaster_factory: ForecasterFactory, methods: Sequence[str], k: int, m: int,
                  method_kw: dict[str, dict] | None, adapt: bool, forecaster_name: str, store) -> list[dict[str, Any]]:
    """Every method x seed on one problem, with one forecaster fitted for it. The fit is skipped
    when only measure_all (which never reads forecasts; it then runs without a forecaster) and
    controls (which bring their own) run. A control gets its base method's `method_kw`."""
    fit = any(split_control(x)[1] is None and x != BASELINE for x in methods)
    forecaster = forecaster_factory(records, problem.id) if fit else None
    base = bench_spec(problem.id, Target("replay", key=hardware_key), budget, k, m, forecaster_name, adapt)
    return [run_one(store, problem, records, base.replace(seed=seed), method, forecaster,
                    (method_kw or {}).get(split_control(method)[0]))
            for method in methods for seed in seeds]


_WORKER: dict[str, Any] = {}


def _worker_init(records) -> None:
    _WORKER["records"] = records


def _worker_problem(args: tuple) -> list[dict[str, Any]]:
    problem, rest = args[0], args[1:]
    with tempfile.TemporaryDirectory(prefix="search_bench_") as tmp:
        with Store(Path(tmp) / "bench.sqlite") as store:
            return _problem_runs(_WORKER["records"], problem, *rest, store)


def run_benchmark(records, hardware_key: str, budget: int, seeds: Sequence[int],
                  forecaster_factory: ForecasterFactory, problems: Sequence[Problem] | None = None,
                  methods: Sequence[str] = REPLAY_METHODS, k: int = 4, m: int = 4,
                  method_kw: dict[str, dict] | None = None, progress: bool = False,
                  adapt: bool = True, jobs: int = 1, forecaster: str = "learned") -> list[dict[str, Any]]:
    """Every method x problem x seed; returns the per-run results in problem, method, seed order.
    Each run is `bench_spec(...).replace(method=..., seed=...)` (`forecaster`: the registered name
    the stored specs give `forecaster_factory`'s forecaster).

    `adapt`: the searches correct their forecasts with their own measurements (SearchRun's
    adapt_forecasts). `jobs` > 1 runs that many problems at once in worker processes (each
    fits its problem's forecaster; `forecaster_factory` must then be a module-level function);
    the results are the same as with one job."""
    problems = list(problems) if problems is not None else eligible_problems(records, hardware_key, budget)
    if jobs < 1:
        raise ConfigError(f"--jobs must be at least 1, got {jobs}")
    rest = (hardware_key, budget, list(seeds), forecaster_factory, list(methods), k, m, method_kw, adapt, forecaster)
    bar = tqdm(total=len(problems), desc="problems", unit="problem", file=sys.stderr, disable=not progress)
    out: list[dict[str, Any]] = []
    try:
        if jobs == 1:
            with tempfile.TemporaryDirectory(prefix="search_bench_") as tmp:
                with Store(Path(tmp) / "bench.sqlite") as store:
                    for problem in problems:
                        out += _problem_runs(records, problem, *rest, store)
                        bar.update(1)
        else:
            import multiprocessing as mp
            from concurrent.futures import ProcessPoolExecutor

            with ProcessPoolExecutor(max_workers=jobs, mp_context=mp.get_context("fork"),
                                     initializer=_worker_init, initargs=(records,)) as pool:
                for runs in pool.map(_worker_problem, [(p, *rest) for p in problems]):
                    out += runs
                    bar.update(1)
    finally:
        bar.close()
    return out


def _median(xs: list[float]) -> float | None:
    if not xs:
        return None
    v = statistics.median(xs)
    return None if math.isinf(v) else v


def metrics(results: list[dict[str, Any]], baseline: str = BASELINE, tie_rel: float = 0.0) -> dict[str, dict[str, Any]]:
    """The per-method metrics of the module docstring from `run_benchmark` results.

    `tie_rel` (a fraction, >= 0): a speedup within this fraction below the one compared against
    counts as reaching it, both for win-or-tie (r >= b * (1 - tie_rel)) and for the budget
    fraction to match (best >= target * (1 - tie_rel)). 0 = exact comparison (replay mode, where
    equal kernels replay equal speedups); live mode passes the GPU type's measured repeat noise.
    A method whose `[random]` control ran too also gets its difference to the control
    (`search_control.vs_random`, same targets and tie_rel): vs_random_diff, vs_random_diff_ci, ...
    """
    floor = tie_floor(tie_rel)
    base = {(r["problem_id"], r["seed"]): r for r in results if r["method"] == baseline}
    target: dict[str, float] = {}
    for pid in {p for p, _ in base}:
        target[pid] = statistics.median(r["best_speedup"] for (p, _), r in base.items() if p == pid)
    out: dict[str, dict[str, Any]] = {}
    for method in sorted({r["method"] for r in results}, key=lambda x: (x != baseline, x)):
        runs = [r for r in results if r["method"] == method]
        ratios: dict[str, list[float]] = {}  # problem -> final best / measure_all's, seed by seed
        pfracs: dict[str, list[float]] = {}  # problem -> budget fractions to match (inf: never)
        for r in runs:
            b = base.get((r["problem_id"], r["seed"]))
            if b is not None:
                ratios.setdefault(r["problem_id"], []).append(
                    r["best_speedup"] / b["best_speedup"] if b["best_speedup"] > 0
                    else (math.inf if r["best_speedup"] > 0 else 1.0))
            t = target.get(r["problem_id"])
            if t is not None:
                hit = first_reach(r["curve"], t, floor)
                pfracs.setdefault(r["problem_id"], []).append(hit / r["budget"] if hit is not None else math.inf)
        wins = [x >= floor for v in ratios.values() for x in v]
        fracs = [f for v in pfracs.values() for f in v]
        per_problem_win = [statistics.median(v) >= floor for v in ratios.values()]
        out[method] = {
            "runs": len(runs),
            "problems": len(ratios),
            "final_best_speedup_median": _median([r["best_speedup"] for r in runs]),
            "win_or_tie_rate_equal_budget": sum(per_problem_win) / len(per_problem_win) if per_problem_win else None,
            "win_or_tie_run_rate": sum(wins) / len(wins) if wins else None,
            "budget_fraction_to_match_median": _median([statistics.median(v) for v in pfracs.values()]),
            "budget_fraction_to_match_run_median": _median(fracs),
            "match_rate": sum(1 for f in fracs if not math.isinf(f)) / len(fracs) if fracs else None,
            "candidates_considered_mean": statistics.fmean(r["considered"] for r in runs) if runs else None,
            "gpu_measurements_max": max((r["gpu_measurements"] for r in runs), default=0),
        }
    for method, diff in vs_random(results, target, tie_rel).items():
        out[method].update(diff)
    return out


def replay_doc(results: list[dict[str, Any]], gpu_key: str, setup: dict[str, Any],
               results_dir: Path = RESULTS_DIR) -> dict[str, Any]:
    """The replay results document: `metrics` (exact ties, the issue's keys), `metrics.replay_tolerant`
    (ties within the GPU type's measured repeat noise, `live_tie_tolerance`: two recorded kernels whose
    speedups differ by less than one measurement's repeat difference are not told apart), and
    `replay_runs` (every run's summary and best-so-far curve, so both can be recomputed)."""
    doc = {"benchmark": "search", "gpu": gpu_key, "date": time.strftime("%Y-%m-%d"), "commit": commit(),
           "metrics": {}, "setup": dict(setup), "replay_runs": results}
    _score_replay(doc, gpu_key, results_dir)
    return doc


def _score_replay(doc: dict[str, Any], gpu_key: str, results_dir: Path) -> list[str]:
    """Set the replay metrics of `doc` (exact per method, and `replay_tolerant`) from its
    `replay_runs`, keeping every live* metric; records the tie tolerance in `setup`. Returns
    the keys written."""
    tie_rel, source = live_tie_tolerance(gpu_key, results_dir)
    results = doc["replay_runs"]
    keep = {k_: v for k_, v in doc.get("metrics", {}).items() if k_.startswith("live")}
    doc["metrics"] = {**metrics(results), "replay_tolerant": metrics(results, tie_rel=tie_rel), **keep}
    doc.setdefault("setup", {}).update(tie_rel=tie_rel, tie_rel_source=source)
    if any(split_control(r["method"])[1] is not None for r in results):
        budget = doc["setup"].get("budget")
        doc["setup"]["vs_random"] = {"metrics.<method>": control_rule(0.0, budget),
                                     "metrics.replay_tolerant.<method>": control_rule(tie_rel, budget)}
    return [k_ for k_ in doc["metrics"] if k_ not in keep]


def add_controls(doc: dict[str, Any], records, gpu_key: str, jobs: int = 1, progress: bool = False,
                 results_dir: Path = RESULTS_DIR) -> dict[str, Any]:
    """Add the random-score controls (`CONTROLS`) to a replay results document whose recorded runs
    lack them, at its recorded settings (budget, seeds, k, m, adapt_forecasts, problems), without
    re-fitting any forecaster; the recorded runs are kept as they are and every replay metric is
    recomputed (`_score_replay`). Changed in place and returned, with `setup.controls` (commit,
    date, seconds, methods).

    Same pools: measure_all (which reads no forecasts) is replayed again on `records` first, and
    ConfigError is raised, with `doc` unchanged, unless every one of its runs equals the recorded
    one; so the controls are searched on the pools the recorded runs were."""
    setup = doc.get("setup") or {}
    missing = [k_ for k_ in ("budget", "seeds", "k", "m", "problems") if k_ not in setup]
    if not doc.get("replay_runs"):
        missing.insert(0, "replay_runs")
    if missing:
        raise ConfigError(f"--add-controls needs a replay results file with its runs and settings; "
                          f"missing {', '.join(missing)}: run the full replay instead")
    by_id = {p.id: p for p in records.problems}
    absent = [pid for pid in setup["problems"] if pid not in by_id]
    if absent:
        raise ConfigError(f"--add-controls: {len(absent)} recorded problems are not in the data "
                          f"({', '.join(absent[:3])}...); pass the --data the runs were recorded on")
    recorded = [r for r in doc["replay_runs"] if split_control(r["method"])[1] is None]
    t0 = time.time()
    new = run_benchmark(records, gpu_key, setup["budget"], list(range(setup["seeds"])), learned_factory,
                        [by_id[pid] for pid in setup["problems"]], methods=(BASELINE, *CONTROLS),
                        k=setup["k"], m=setup["m"], progress=progress,
                        adapt=setup.get("adapt_forecasts", True), jobs=jobs)
    seconds = round(time.time() - t0, 1)
    old_base = {(r["problem_id"], r["seed"]): r for r in recorded if r["method"] == BASELINE}
    again = [json.loads(json.dumps(r)) for r in new if r["method"] == BASELINE]
    differ = [(r["problem_id"], r["seed"]) for r in again if old_base.get((r["problem_id"], r["seed"])) != r]
    if differ or len(again) != len(old_base):
        raise ConfigError(f"--add-controls: measure_all replayed on this data differs from the recorded runs on "
                          f"{len(differ)} of {len(again)} problem x seed pairs (e.g. {differ[:2]}), or covers "
                          f"other pairs: the pools are not the recorded ones; pass the --data the runs were "
                          "recorded on, or run the full replay")
    order = {pid: i for i, pid in enumerate(setup["problems"])}
    rank = {x: i for i, x in enumerate(REPLAY_METHODS)}
    runs = recorded + [json.loads(json.dumps(r)) for r in new if r["method"] != BASELINE]
    doc["replay_runs"] = sorted(runs, key=lambda r: (order.get(r["problem_id"], len(order)),
                                                     rank.get(r["method"], len(rank)), r["seed"]))
    doc["setup"]["controls"] = {"commit": commit(), "date": time.strftime("%Y-%m-%d"), "methods": list(CONTROLS),
                                "seconds": seconds, "jobs": jobs,
                                "pools_checked": f"measure_all's {len(again)} runs replayed again at this commit "
                                                 "equal the recorded ones"}
    _score_replay(doc, gpu_key, results_dir)
    return doc


# --------------------------------------------------------------------------- live mode
#: Cheap to measure on an H100 (reference and compile times small in the shipped data), several
#: zoo kernels each, one problem per level.
LIVE_PROBLEMS = ("L1/01_softmax", "L2/08_residual_layernorm", "L3/02_gated_mlp_swiglu_bf16")
#: Finish reasons under which a run may end with fewer GPU measurements than its budget.
RAN_DRY = ("exhausted", "no usable parent")
#: Settings that must be equal for live runs to be pooled in one results file. The methods are not
#: among them: a call may run a subset (e.g. the methods a time-guarded call skipped), and the live
#: section's `methods` is the union over its calls.
LIVE_SETTINGS = ("budget", "k", "m", "max_seeds", "forecaster", "generator", "adapt_forecasts", "policy",
                 "uncertainty_aware_rule")
#: How the selective and uncertainty_aware methods decide (the `policy` live setting).
POLICY_RULES = ("policies calibrated on the forecaster's held-out forecasts and the run's own; "
                "uncertainty_aware trusts only confident no-gain forecasts")
#: How uncertainty_aware decides which children need no measurement, by its trust_rule.
UA_RULES = {"policy": "policy: a child is trusted when the selective policy trusts its forecast (bin confidence) "
                      "and its expected improvement is below min_gain",
            "no_gain": "no_gain: a child is trusted when the conformal no-gain certificate (risk 0.1, delta 0.1) "
                       "covers its forecast probability of not beating its parent by min_gain 0.02"}
#: The rule of the default uncertainty_aware (the `uncertainty_aware_rule` live setting).
UA_RULE = UA_RULES[make_method("uncertainty_aware").trust_rule]
#: Value of a live setting that live sections recorded before the setting existed lack.
LIVE_DEFAULTS = {"adapt_forecasts": False,
                 "policy": "policies calibrated on the run's own forecasts (16 or more); uncertainty_aware "
                           "skips every child with expected improvement below min_gain",
                 "uncertainty_aware_rule": UA_RULES["policy"]}
#: Live settings that concern only some methods: when only these differ, `--archive-as NAME`
#: archives the live section and restarts those methods' live runs, keeping the others'.
METHOD_SETTINGS = {"uncertainty_aware_rule": ("uncertainty_aware",)}
#: The executor benchmark's metric that sets the live tie tolerance (a percentage).
TIE_KEY = "cross_process_diff_pct_median"
#: Per-run keys written to the results file.
RUN_KEYS = ("problem_id", "method", "seed", "budget", "gpu_measurements", "best_speedup", "considered",
            "finish_reason", "budget_exact", "wall_s", "curve")

#: problem -> a fresh generator for one run
GeneratorFactory = Callable[[Problem], Any]


def mutation_generator(problem: Problem):
    """The live generator: zoo kernels as seeds, mutation children."""
    from workbench.search import MutationGenerator, ZooGenerator

    return MutationGenerator(ZooGenerator())


def live_executor(gpu: str):
    """`cuda[:N]` -> LocalGPUExecutor on GPU N; `cpu` -> CPUExecutor (Triton interpreter, for tests)."""
    from workbench.compose import make_executor
    from workbench.spec import Target

    target = Target.parse(gpu)
    if target.kind not in ("cuda", "cpu"):
        raise ConfigError(f"--gpu {gpu!r} is not a live device; use cuda:0 (or cpu for a smoke test)")
    return make_executor(target)


def budget_exact(run: dict[str, Any]) -> bool:
    """The run used its whole budget, or fewer only because the generator ran dry."""
    if run["gpu_measurements"] == run["budget"]:
        return True
    return run["gpu_measurements"] < run["budget"] and run["finish_reason"].startswith(RAN_DRY)


def run_live(records, problems: Sequence[Problem], executor, seeds: Sequence[int], budget: int,
             forecaster_factory: ForecasterFactory, methods: Sequence[str] = METHODS, k: int = 4, m: int = 4,
             max_seeds: int = 4, budget_s: float = 420.0, progress: bool = True, parallel: int = 1,
             generator_factory: GeneratorFactory = mutation_generator,
             warm_up: Callable[[], Any] | None = None, adapt: bool = True,
             deadline_s: float | None = None, target: Target | str | None = None,
             forecaster: str = "learned") -> dict[str, Any]:
    """Every problem x seed x method measured live on `executor` (shared; each run measures its own
    candidates, so each method's GPU budget is exact).

    The plan is seeds x problems x methods. `parallel` = 1 runs it in that order in this thread.
    `parallel` = N > 1 searches up to N runs at once, started in plan order, each in its own
    thread with its own Store (its own SQLite file). The forecaster is fitted once per problem
    (by the first run to need it; the others wait for that fit) and shared: a run never changes
    it (`Forecaster.for_run`), so a run sees the same forecaster whatever the parallelism. The executor is shared (its `submit` is thread-safe), so the runs'
    candidates fill its workers together (runs of one problem share its chunk workers).
    `warm_up()`, if given, runs once before any thread starts (e.g. to fill shared feature caches).

    No new run starts once `budget_s` seconds (wall clock, warm-up and fits included) have passed,
    in any thread; such runs are listed in "skipped". At `deadline_s` seconds (None: never) every
    run still going is stopped after its current step and listed in "skipped" too, with the GPU
    measurements it had spent (`stopped_at`): a call that must end by a hard limit keeps the runs
    that finished instead of losing everything to the limit. A run that raises (its forecaster's fit
    included) is listed in "failed" with its error; the other runs go on. Returns {"runs",
    "skipped", "failed", "seconds", "warm_up_s", "parallel"}, each list in plan order; each run
    carries `wall_s` (seconds) and `budget_exact`.

    Each run is `bench_spec(...).replace(method=..., seed=...)`; `target` (default: cpu for the
    CPU interpreter, else cuda) and `forecaster` (a registered name) describe the executor and
    `forecaster_factory`'s forecaster in those specs.
    """
    if target is None:
        target = "cpu" if executor.hardware.key == "cpu" else "cuda"
    if parallel < 1:
        raise ConfigError(f"--parallel must be at least 1, got {parallel}")
    t0 = time.monotonic()
    plan = list(enumerate((p, s, meth) for s in seeds for p in problems for meth in methods))
    outcome: dict[int, tuple[str, dict[str, Any]]] = {}
    lock = threading.Lock()
    warm_up_s = 0.0
    if warm_up is not None:
        warm_up()
        warm_up_s = round(time.monotonic() - t0, 1)
    bar = tqdm(total=len(plan), desc="live runs", unit="run", file=sys.stderr, disable=not progress,
               mininterval=5.0)

    def record(i: int, kind: str, rec: dict[str, Any], line: str) -> None:
        with lock:
            outcome[i] = (kind, rec)
            bar.update(1)
            if progress:
                bar.write(f"[{i + 1}/{len(plan)}] {rec['problem_id']} {rec['method']} seed {rec['seed']}: {line}",
                          file=sys.stderr)

    def past_deadline() -> bool:
        return deadline_s is not None and time.monotonic() - t0 > deadline_s

    fitted: dict[str, Any] = {}  # problem id -> its fitted forecaster, or the exception its fit raised
    fit_locks = {p.id: threading.Lock() for p in problems}

    def forecaster_for(problem: Problem) -> Any:
        """The problem's forecaster (fitted once, by whichever thread asks first; shared by the
        threads: a run never changes its forecaster, see `Forecaster.for_run`)."""
        with fit_locks[problem.id]:
            if problem.id not in fitted:
                try:
                    fitted[problem.id] = forecaster_factory(records, problem.id)
                except Exception as e:  # noqa: BLE001 - kept, so later runs fail the same way
                    fitted[problem.id] = e
        fc = fitted[problem.id]
        if isinstance(fc, Exception):
            raise RuntimeError(f"forecaster fit failed: {type(fc).__name__}: {fc}") from fc
        return fc

    def work(items: list[tuple[int, tuple[Problem, int, str]]], db_path: Path) -> None:
        """Runs `items` (the whole plan, or one run when parallel) in order against one Store."""
        forecasters: dict[str, Any] = {}
        try:
            store = Store(db_path)
        except Exception as e:  # noqa: BLE001 - every run given here is recorded as failed
            for i, (problem, seed, method) in items:
                record(i, "failed", {"problem_id": problem.id, "method": method, "seed": seed, "budget": budget,
                                     "error": f"store: {type(e).__name__}: {e}"}, "FAILED (store)")
            return
        with store:
            for i, (problem, seed, method) in items:
                key = {"problem_id": problem.id, "method": method, "seed": seed}
                if time.monotonic() - t0 > budget_s or past_deadline():
                    record(i, "skipped", key, "skipped (time guard)")
                    continue
                t1 = time.monotonic()
                try:
                    if problem.id not in forecasters:
                        forecasters[problem.id] = forecaster_for(problem)
                    fc = forecasters[problem.id]
                    spec = bench_spec(problem.id, target, budget, k, m, forecaster, adapt, max_seeds)
                    r = search_once(store, spec.replace(method=method, seed=seed), problem, executor,
                                    generator_factory(problem), fc, stop_when=past_deadline)
                except Exception as e:  # noqa: BLE001 - one failed run must not stop the others
                    rec = {**key, "budget": budget, "error": f"{type(e).__name__}: {e}",
                           "wall_s": round(time.monotonic() - t1, 2)}
                    record(i, "failed", rec, f"FAILED: {rec['error']}")
                    continue
                if not r.pop("finished"):  # stopped at the deadline: its partial search is not a result
                    record(i, "skipped", {**key, "stopped_at": r["gpu_measurements"]},
                           f"stopped at the deadline after {r['gpu_measurements']} GPU measurements")
                    continue
                r["wall_s"] = round(time.monotonic() - t1, 2)
                r["budget_exact"] = budget_exact(r)
                record(i, "run", r, f"best {r['best_speedup']:.3f}x, {r['gpu_measurements']}/{budget} GPU "
                                    f"measurements, {r['wall_s']:.1f} s")

    try:
        with tempfile.TemporaryDirectory(prefix="search_live_") as tmp:
            if parallel == 1:
                work(plan, Path(tmp) / "live.sqlite")
            else:
                with ThreadPoolExecutor(max_workers=min(parallel, len(plan) or 1),
                                        thread_name_prefix="search-live") as pool:
                    futs = [pool.submit(work, [item], Path(tmp) / f"live-{n}.sqlite")
                            for n, item in enumerate(plan)]
                    for f in futs:
                        f.result()
    finally:
        bar.close()
    by_kind: dict[str, list[dict[str, Any]]] = {"run": [], "skipped": [], "failed": []}
    for i in sorted(outcome):
        kind, rec = outcome[i]
        by_kind[kind].append(rec)
    return {"runs": by_kind["run"], "skipped": by_kind["skipped"], "failed": by_kind["failed"],
            "seconds": round(time.monotonic() - t0, 1), "warm_up_s": warm_up_s, "parallel": parallel}


def complete_runs(runs: list[dict[str, Any]], methods: Sequence[str] = METHODS) -> list[dict[str, Any]]:
    """The runs of the (problem, seed) pairs on which every method completed."""
    done: dict[tuple[str, int], set[str]] = {}
    for r in runs:
        done.setdefault((r["problem_id"], r["seed"]), set()).add(r["method"])
    full = {key for key, ms in done.items() if set(methods) <= ms}
    return [r for r in runs if (r["problem_id"], r["seed"]) in full]


def live_metrics(runs: list[dict[str, Any]], methods: Sequence[str] = METHODS,
                 tie_rel: float = 0.0) -> dict[str, dict[str, Any]]:
    """`metrics` (with `tie_rel`) over the (problem, seed) pairs on which every method completed."""
    return metrics(complete_runs(runs, methods), tie_rel=tie_rel)


def live_spread(runs: list[dict[str, Any]], methods: Sequence[str] = METHODS) -> dict[str, dict[str, Any]]:
    """Per problem and method, over the complete (problem, seed) pairs: the final best speedup's
    seeds, mean, sample standard deviation (None for one seed), min and max."""
    out: dict[str, dict[str, Any]] = {}
    for r in complete_runs(runs, methods):
        out.setdefault(r["problem_id"], {}).setdefault(r["method"], []).append(r)
    for pid, by_method in out.items():
        for method, rs in by_method.items():
            xs = [r["best_speedup"] for r in sorted(rs, key=lambda r: r["seed"])]
            by_method[method] = {"seeds": sorted(r["seed"] for r in rs), "mean": statistics.fmean(xs),
                                 "sd": statistics.stdev(xs) if len(xs) > 1 else None,
                                 "min": min(xs), "max": max(xs)}
    return out


def live_tie_tolerance(gpu_key: str, results_dir: Path = RESULTS_DIR) -> tuple[float, dict[str, Any]]:
    """The live tie tolerance: `executor-<gpu_key>.json` metrics.cross_process_diff_pct_median / 100
    (the median relative speedup difference of one candidate measured in two worker processes by
    the executor on that GPU type). Returns (tie_rel, where it came from); (0.0, ...) when that
    GPU type has no such record (strict ties)."""
    path = results_dir / f"executor-{gpu_key}.json"
    value = (json.loads(path.read_text()).get("metrics", {}).get(TIE_KEY) if path.exists() else None)
    if value is None:
        return 0.0, {"file": None, "gpu": None, "note": f"{path.name} has no metrics.{TIE_KEY}; ties are strict"}
    return value / 100, {"file": f"benchmarks/results/{path.name}", "key": f"metrics.{TIE_KEY}",
                         "gpu": gpu_key, "value_pct": value, "note": ""}


def live_settings(live: dict[str, Any]) -> dict[str, Any]:
    """The `LIVE_SETTINGS` of a live section."""
    return {k: live.get(k, LIVE_DEFAULTS.get(k)) for k in LIVE_SETTINGS}


def differing_settings(live: dict[str, Any], settings: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """The `LIVE_SETTINGS` in which a live section and a call's settings differ, in that order:
    setting -> (recorded value, this call's value)."""
    theirs, ours = live_settings(live), live_settings(settings)
    return {k: (theirs[k], ours[k]) for k in LIVE_SETTINGS if theirs[k] != ours[k]}


def check_live_settings(doc: dict[str, Any] | None, settings: dict[str, Any], replace: bool, where: str) -> None:
    """Raise ConfigError when `doc` holds live runs taken with other settings (unless `replace`)."""
    old = (doc or {}).get("live")
    if replace or not old or not old.get("runs"):
        return
    keys = differing_settings(old, settings)
    diff = [f"{k} {recorded!r} (recorded) vs {ours!r} (this call)" for k, (recorded, ours) in keys.items()]
    if diff:
        restart = sorted({m for k in keys for m in METHOD_SETTINGS.get(k, ())})
        hint = (f", or pass --archive-as NAME to archive the live section as live_NAME and restart the live runs "
                f"of {', '.join(restart)} only" if all(k in METHOD_SETTINGS for k in keys) else "")
        raise ConfigError(f"the live runs in {where} were taken with other settings: {'; '.join(diff)}. Run with "
                          "the recorded settings to add runs, or pass --replace-live to discard the recorded "
                          f"live runs{hint}")


def archive_and_restart(doc: dict[str, Any], settings: dict[str, Any], name: str, gpu_key: str,
                        results_dir: Path = RESULTS_DIR) -> list[str]:
    """When the recorded live settings differ from `settings` only in method-specific ones
    (`METHOD_SETTINGS`): copy the live section, as it is, to `live_<name>` (scored as an archived
    section), drop the live runs (and skipped / failed entries) of the methods those settings
    concern, and record the new settings, so later calls add those methods' runs under the new
    settings while every other method's runs stay. Returns the restarted methods; raises
    ConfigError when another setting differs, nothing differs, or `live_<name>` exists."""
    old = doc.get("live")
    if not old or not old.get("runs"):
        raise ConfigError("--archive-as: there are no recorded live runs to archive")
    key = f"live_{name}"
    if not name.replace("_", "").isalnum() or key in doc:
        raise ConfigError(f"--archive-as {name!r}: give a new name of letters, digits and '_' ({key} exists or is "
                          "not a valid name)")
    keys = differing_settings(old, settings)
    ours = {k: new for k, (_, new) in keys.items()}
    if not keys:
        raise ConfigError("--archive-as: the recorded live settings equal this call's; nothing to restart")
    others = [k for k in keys if k not in METHOD_SETTINGS]
    if others:
        raise ConfigError(f"--archive-as restarts only method-specific settings ({', '.join(METHOD_SETTINGS)}); "
                          f"{', '.join(others)} differ as well: use --replace-live")
    restart = sorted({m for k in keys for m in METHOD_SETTINGS[k]})
    doc[key] = copy.deepcopy(old)
    doc[key]["archived"] = {"date": time.strftime("%Y-%m-%d"), "reason": "restarted "
                            + ", ".join(restart) + " under " + "; ".join(f"{k} {ours[k]!r}" for k in keys)}
    keep = lambda x: x["method"] not in restart  # noqa: E731
    live = doc["live"]
    live["runs"] = [r for r in old["runs"] if keep(r)]
    live["skipped"] = [x for x in old.get("skipped", []) if keep(x)]
    live["failed"] = [x for x in old.get("failed", []) if keep(x)]
    live.update(ours)
    live["restarted"] = [*old.get("restarted", []), {"methods": restart, "archived_as": key,
                                                     "at_call": len(old.get("calls", []))}]
    live["completed"] = len(live["runs"])
    live["gpu_measurements_used"] = sum(r["gpu_measurements"] for r in live["runs"])
    rescore(doc, gpu_key, results_dir)
    return restart


def _run_key(r: dict[str, Any]) -> tuple[str, str, int]:
    return (r["problem_id"], r["method"], r["seed"])


def merge_live(doc: dict[str, Any], settings: dict[str, Any], call: dict[str, Any], out: dict[str, Any],
               hardware, replace: bool = False, results_dir: Path = RESULTS_DIR) -> dict[str, Any]:
    """Add one live call's runs (`out` from `run_live`) to `doc` (a results document, changed in place
    and returned): a run with the same (problem, method, seed) as a recorded one replaces it, other
    recorded runs stay. `settings` must match the recorded ones (see `check_live_settings`; `replace`
    discards the recorded live section instead). `call` (provenance: commit, date, device, ...) is
    appended to live.calls; `hardware` is the executor's Hardware record. metrics.live (tolerant
    ties) and metrics.live_strict (tie_rel 0) are recomputed over all runs."""
    check_live_settings(doc, settings, replace, "the results file")
    old = {} if replace else (doc.get("live") or {})
    calls = list(old.get("calls", []))
    call_index = len(calls)
    runs = {_run_key(r): r for r in old.get("runs", [])}
    new = [{**{k_: r[k_] for k_ in RUN_KEYS}, "call": call_index} for r in out["runs"]]
    replaced = sum(_run_key(r) in runs for r in new)
    runs.update({_run_key(r): r for r in new})
    problems = list(dict.fromkeys([*old.get("problems", []), *call["problems"]]))
    order = {"problem": {p: i for i, p in enumerate(problems)}, "method": {x: i for i, x in enumerate(METHODS)}}
    merged = sorted(runs.values(), key=lambda r: (r["seed"], order["problem"].get(r["problem_id"], len(problems)),
                                                  order["method"].get(r["method"], len(METHODS)), r["method"]))
    pending_by_key: dict[tuple[str, str, int], dict[str, Any]] = {}  # a later call's entry wins
    for x in [*old.get("skipped", []), *old.get("failed", []), *out["skipped"], *out["failed"]]:
        if _run_key(x) not in runs:
            pending_by_key.pop(_run_key(x), None)
            pending_by_key[_run_key(x)] = x
    pending = list(pending_by_key.values())
    calls.append({**call, "runs": len(new), "replaced": replaced, "skipped": len(out["skipped"]),
                  "failed": len(out["failed"]), "hardware_fingerprint": hardware.fingerprint})
    methods = {*old.get("methods", []), *settings["methods"]}
    live = {"mode": "live", **{k_: settings.get(k_, LIVE_DEFAULTS.get(k_)) for k_ in LIVE_SETTINGS},
            "methods": sorted(methods, key=lambda x: (order["method"].get(x, len(METHODS)), x)),
            "hardware": hardware.to_dict(),
            "hardware_fingerprint": hardware.fingerprint,
            "hardware_fingerprints": sorted({c["hardware_fingerprint"] for c in calls}),
            "problems": problems, "seeds": sorted({r["seed"] for r in merged}),
            "gpu_measurements_used": sum(r["gpu_measurements"] for r in merged),
            "budget_exact_all": all(r["budget_exact"] for r in merged), "completed": len(merged),
            "skipped": [x for x in pending if "error" not in x],
            "failed": [x for x in pending if "error" in x],
            "date": call["date"], "commit": call["commit"], "calls": calls, "runs": merged}
    if "restarted" in old:
        live["restarted"] = old["restarted"]
    if "unattributed" in old:
        live["unattributed"] = old["unattributed"]
    elif "seconds" in old and old.get("runs"):  # recorded before each call carried its own timing
        live["unattributed"] = {"seconds": old["seconds"], "budget_s": old.get("budget_s"),
                                "note": "wall clock recorded once for the calls listed before this key existed"}
    doc["live"] = live
    return score_live(doc, hardware.key, results_dir)


def score_live(doc: dict[str, Any], gpu_key: str, results_dir: Path = RESULTS_DIR) -> dict[str, Any]:
    """Set live.tie_rel / live.tie_rel_source from the executor results now on disk, recompute
    metrics.live (tolerant) and metrics.live_strict over all recorded live runs and live.per_problem
    (`live_spread`); returns `doc`."""
    live = doc["live"]
    live["tie_rel"], live["tie_rel_source"] = live_tie_tolerance(gpu_key, results_dir)
    _score_live_section(doc, live, "")
    return doc


def _score_live_section(doc: dict[str, Any], section: dict[str, Any], suffix: str) -> list[str]:
    """metrics.live<suffix> (ties within the section's `tie_rel`, 0 when it has none),
    metrics.live_strict<suffix> (exact) and the section's `per_problem`, from its runs."""
    methods = section.get("methods", METHODS)
    doc.setdefault("metrics", {})[f"live{suffix}"] = live_metrics(section["runs"], methods,
                                                                  section.get("tie_rel", 0.0))
    doc["metrics"][f"live_strict{suffix}"] = live_metrics(section["runs"], methods, 0.0)
    section["per_problem"] = live_spread(section["runs"], methods)
    return [f"live{suffix}", f"live_strict{suffix}"]


def rescore(doc: dict[str, Any], gpu_key: str, results_dir: Path = RESULTS_DIR) -> list[str]:
    """Recompute every metric of a results document from the runs it records, measuring nothing:
    the replay metrics from `replay_runs` (exact, and tolerant with the tie tolerance now on disk),
    the live ones with `score_live`, and each archived live section `live_<name>` (runs taken
    under earlier settings) into metrics.live_<name> / live_strict_<name> with its own recorded
    tie tolerance. Returns the metrics keys written (empty when the document records no runs)."""
    written: list[str] = []
    if doc.get("replay_runs"):
        written += _score_replay(doc, gpu_key, results_dir)
    if doc.get("live", {}).get("runs"):
        score_live(doc, gpu_key, results_dir)
        written += ["live", "live_strict"]
    for key, section in doc.items():
        if key.startswith("live_") and isinstance(section, dict) and section.get("runs"):
            written += _score_live_section(doc, section, key[len("live"):])
    return written


def h100_factory(records, held_out: str):
    """LearnedForecaster fitted on the shipped H100 rows of every problem except `held_out`."""
    from workbench.forecast.learned import LearnedForecaster

    ms = [x for x in records.measurements if x.problem_id != held_out and x.hardware_key == "h100"]
    return LearnedForecaster(reference_time="estimate").fit(records.problems, records.candidates, ms)  # as above


def warm_h100_features(records) -> None:
    """Compute the static features of every shipped H100 row once, so the per-problem fits that
    run in parallel threads find them in the shared cache instead of each computing them."""
    from workbench.forecast.features import feature_matrix
    from workbench.forecast.learned import training_rows

    ms = [x for x in records.measurements if x.hardware_key == "h100"]
    feature_matrix([(p, c, h) for p, c, h, _ in training_rows(records.problems, records.candidates, ms)])


def live_main(args) -> int:
    """--live: measure on args.gpu, add the runs to the live section of the results file."""
    from workbench.dataset.shipped import load_shipped
    from workbench.problems import get_problem

    if args.parallel < 1 or args.seed_offset < 0 or args.seeds < 1:
        raise ConfigError("--parallel and --seeds must be at least 1 and --seed-offset at least 0")
    records = load_shipped(args.data)
    problems = [get_problem(pid) for pid in (args.problems.split(",") if args.problems else LIVE_PROBLEMS)]
    factory = h100_factory if args.forecaster == "learned" else roofline_factory
    methods = args.methods.split(",") if args.methods else list(METHODS)
    seeds = list(range(args.seed_offset, args.seed_offset + args.seeds))
    settings = {"budget": args.budget, "k": args.k, "m": args.m, "max_seeds": args.max_seeds,
                "forecaster": args.forecaster + (" (shipped h100 rows of the other problems)"
                                                 if args.forecaster == "learned" else ""),
                "generator": "mutation (zoo seeds)", "methods": methods, "adapt_forecasts": not args.no_adapt,
                "policy": POLICY_RULES, "uncertainty_aware_rule": UA_RULE}
    executor = live_executor(args.gpu)
    try:
        hw = executor.hardware
        if hw.key == "cpu":  # interpreter timings are never merged into a GPU results file
            base, doc = None, {"benchmark": "search", "gpu": "cpu", "metrics": {}}
        else:
            base = RESULTS_DIR / f"search-{hw.key}.json"
            doc = (json.loads(base.read_text()) if base.exists()
                   else {"benchmark": "search", "gpu": hw.key, "metrics": {}})
            if args.archive_as:
                restarted = archive_and_restart(doc, settings, args.archive_as, hw.key)
                print(f"archived the live section as live_{args.archive_as}; restarted {', '.join(restarted)}",
                      file=sys.stderr)
            check_live_settings(doc, settings, args.replace_live, str(base))  # before any GPU time is spent
        warm = (lambda: warm_h100_features(records)) if args.parallel > 1 and args.forecaster == "learned" else None
        out = run_live(records, problems, executor, seeds, args.budget, factory, methods, k=args.k, m=args.m,
                       max_seeds=args.max_seeds, budget_s=args.budget_s, parallel=args.parallel, warm_up=warm,
                       adapt=not args.no_adapt, deadline_s=args.deadline_s, target=args.gpu,
                       forecaster=args.forecaster)
    finally:
        executor.close()
    call = {"commit": commit(), "date": time.strftime("%Y-%m-%d"), "device": args.gpu,
            "problems": [p.id for p in problems], "seeds": seeds, "parallel": args.parallel,
            "budget_s": args.budget_s, "deadline_s": args.deadline_s, "seconds": out["seconds"],
            "warm_up_s": out["warm_up_s"],
            "gpu_measurements_used": sum(r["gpu_measurements"] for r in out["runs"])}
    merge_live(doc, settings, call, out, hw, replace=args.replace_live)
    if base is None:
        doc.update(date=call["date"], commit=call["commit"])
    out_dir = Path(args.out) if args.out else None
    name = f"search-{hw.key}.json"
    targets = ([base] if base is not None else []) + ([out_dir / name] if out_dir else [])
    if not targets:
        print("--gpu cpu writes only to --out DIR; nothing written", file=sys.stderr)
    for t in targets:
        t.parent.mkdir(parents=True, exist_ok=True)
        t.write_text(json.dumps(doc, indent=2) + "\n")
        print(f"wrote {t}", file=sys.stderr)
    for f in out["failed"]:
        print(f"failed: {f['problem_id']} {f['method']} seed {f['seed']}: {f['error']}", file=sys.stderr)
    print(json.dumps({k_: doc["metrics"][k_] for k_ in ("live", "live_strict")}, indent=2))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=None, help="shipped data directory (default kernels_cache/shipped)")
    ap.add_argument("--gpu", default="h100", help="hardware key to replay")
    ap.add_argument("--budget", type=int, default=DEFAULTS["budget"])
    ap.add_argument("--seeds", type=int, default=MIN_SEEDS)
    ap.add_argument("--k", type=int, default=DEFAULTS["k"])
    ap.add_argument("--m", type=int, default=DEFAULTS["m"])
    ap.add_argument("--forecaster", choices=forecaster_names("bench"), default=DEFAULTS["forecaster"])
    ap.add_argument("--max-problems", type=int, default=None)
    ap.add_argument("--jobs", type=int, default=1, help="replay: problems searched at once, in worker "
                    "processes (same results as one job)")
    ap.add_argument("--no-adapt", action="store_true", help="searches forecast with the fitted forecaster "
                    "only, not corrected by their own measurements of the problem (SearchRun's adapt_forecasts)")
    ap.add_argument("--out", default=None, help="default benchmarks/results/search-<gpu>.json (also the file "
                    "--rescore rewrites); with --live a directory that gets a copy (the only output of a "
                    "--gpu cpu run)")
    ap.add_argument("--live", action="store_true", help="measure on --gpu cuda:N (or cpu, smoke test only) with "
                    "mutation candidates; adds its runs to the live runs in benchmarks/results/search-<gpu type>.json")
    ap.add_argument("--problems", default=None, help="--live: comma-separated ids (default "
                    + ",".join(LIVE_PROBLEMS) + ")")
    ap.add_argument("--methods", default=None, help="--live: comma-separated subset of the methods")
    ap.add_argument("--max-seeds", type=int, default=DEFAULTS["max_seeds"], help="--live: zoo seeds measured at step 0")
    ap.add_argument("--budget-s", type=float, default=420.0,
                    help="--live: start no new run after this many seconds (wall clock)")
    ap.add_argument("--deadline-s", type=float, default=None,
                    help="--live: stop the runs still going after this many seconds (wall clock); they are "
                    "listed as skipped, the finished ones are kept")
    ap.add_argument("--parallel", type=int, default=1, help="--live: search up to N runs at once (started "
                    "in plan order), one thread each, sharing the executor")
    ap.add_argument("--seed-offset", type=int, default=0, help="--live: run seeds S..S+seeds-1 (add seeds to "
                    "recorded runs)")
    ap.add_argument("--archive-as", default=None, metavar="NAME",
                    help="--live: when only a method-specific setting (uncertainty_aware_rule) differs from the "
                         "recorded live runs, archive the live section as live_NAME and restart that method's "
                         "live runs, keeping the other methods' runs")
    ap.add_argument("--replace-live", action="store_true", help="--live: discard the recorded live runs instead "
                    "of adding to them (needed when the settings differ)")
    ap.add_argument("--add-controls", action="store_true", help="replay only the random-score controls "
                    "(<method>[random]) at the settings recorded in search-<--gpu>.json (or --out) and add "
                    "them to its recorded runs, checking first that measure_all replays the recorded runs "
                    "on --data; no forecaster is fitted")
    ap.add_argument("--rescore", action="store_true", help="measure nothing: recompute every metric of "
                    "search-<--gpu>.json (replay, live and archived live sections) from the runs it records, "
                    "with the tie tolerance now on disk for the replay and live sections")
    args = ap.parse_args(argv)
    if args.rescore:
        path = Path(args.out) if args.out else RESULTS_DIR / f"search-{args.gpu}.json"
        doc = json.loads(path.read_text()) if path.exists() else {}
        written = rescore(doc, args.gpu)
        if not written:
            print(f"error: no runs recorded in {path}; run the replay or --live first", file=sys.stderr)
            return 2
        # the runs keep the commit that measured them (`commit`, live.calls); this names the metrics' code
        doc["rescored"] = {"commit": commit(), "date": time.strftime("%Y-%m-%d"), "keys": written}
        path.write_text(json.dumps(doc, indent=2) + "\n")
        print(json.dumps({k_: doc["metrics"][k_] for k_ in written}, indent=2))
        return 0
    if args.live:
        try:
            return live_main(args)
        except WorkbenchError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
    if args.add_controls:
        from workbench.dataset.shipped import load_shipped

        path = Path(args.out) if args.out else RESULTS_DIR / f"search-{args.gpu}.json"
        try:
            doc = json.loads(path.read_text()) if path.exists() else {}
            add_controls(doc, load_shipped(args.data), args.gpu, jobs=args.jobs, progress=True)
        except WorkbenchError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        path.write_text(json.dumps(doc, indent=2) + "\n")
        print(json.dumps({k_: v for k_, v in doc["metrics"].items() if not k_.startswith("live")}, indent=2))
        return 0

    from workbench.dataset.shipped import load_shipped

    records = load_shipped(args.data)
    problems = eligible_problems(records, args.gpu, args.budget)[: args.max_problems]
    if len(problems) < MIN_PROBLEMS or args.seeds < MIN_SEEDS:
        print(f"need >= {MIN_PROBLEMS} problems with more than {args.budget} measurements on {args.gpu} "
              f"(found {len(problems)}) and >= {MIN_SEEDS} seeds; nothing written", file=sys.stderr)
        return 1
    factory = learned_factory if args.forecaster == "learned" else roofline_factory
    t0 = time.time()
    results = run_benchmark(records, args.gpu, args.budget, list(range(args.seeds)), factory, problems,
                            k=args.k, m=args.m, progress=True, adapt=not args.no_adapt, jobs=args.jobs,
                            forecaster=args.forecaster)
    doc = replay_doc(results, args.gpu, {"budget": args.budget, "seeds": args.seeds, "k": args.k, "m": args.m,
                                         "forecaster": args.forecaster, "adapt_forecasts": not args.no_adapt,
                                         "problems": [p.id for p in problems],
                                         "mode": "replay", "seconds": round(time.time() - t0, 1)})
    out = Path(args.out) if args.out else RESULTS_DIR / f"search-{args.gpu}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.exists():  # a replay re-run keeps the live runs recorded in the same file (every live* key)
        old = json.loads(out.read_text())
        for key, value in old.get("metrics", {}).items():
            if key.startswith("live"):
                doc["metrics"][key] = value
        for key, value in old.items():
            if key.startswith("live"):
                doc[key] = value
    out.write_text(json.dumps(doc, indent=2) + "\n")
    print(json.dumps(doc["metrics"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
