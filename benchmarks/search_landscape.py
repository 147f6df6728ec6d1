"""The search benchmark at the study's setting, replayed over stored landscapes (no GPU), scored
against each landscape's global best.

For every held-out problem of the protocol (workbench/data/heldout_landscapes.toml) that has a
landscape under --landscapes, every budget (8, 16, 32, 64), seed (5) and method, a PUCT search
expands parents into 16 children of which 4 are measured (k=4, m=4). Every "measurement" is the
landscape's recorded one (CacheExecutor). Methods:
- over the stored neighbourhoods (LandscapeGenerator: 4 seed points drawn by the problem id,
  children from the points one or two parameters away): measure_all (children measured in
  generator order), screen_topk with the learned forecaster, screen_topk[random] (seeded random
  scores: the control), uncertainty_aware and uncertainty_aware[random], certified_skip (below);
- over the whole enumerable space (benchmarks/search_space.py, workbench/search/space.py):
  space_search (seeds and restarts screened by the forecaster over the whole space, moves that
  change one to four parameters or the algorithm, screen_topk on adapted forecasts; its restart
  share chosen by inner cross-validation on the training problems), space_search[random] (the
  same with seeded random scores) and space_skip (space_search with the certified skip rule
  calibrated on its own search states);
- the two reference orders (workbench/landscape/orders.py), which need no search: ranked_order
  (the whole space measured in the order of the forecaster's expected log2 speedup) and
  random_order (a seeded random order of it).

The learned forecaster (default settings, fixed before the split) is fitted ONCE on the rows of
the training problems only (the landscapes' and --train-data's: benchmarks/search_control.py
`protocol_factory`, which drops every held-out problem's rows and refuses them at any later fit);
fits go through workbench.forecast.fitted's cache (--fit-cache), keyed by their rows and settings.

certified_skip: a child is trusted, i.e. skipped (never measured), when its forecast is certified
not to beat its parent: `certify_skip` (the conformal risk controller, target --trust-risk, delta
--trust-delta) picks the threshold on calibration pairs (parent point, neighbour) from the
TRAINING landscapes only, each forecast out of fold (--trust-folds problem folds, each forecast
by a forecaster fitted without its fold: workbench/landscape/trust.py). Its searches run without
adapting forecasts (adapt_forecasts=False), as the calibration forecasts were taken.
certified_skip_best (not in the default --methods; post hoc on H200): the same with the risk "a
trusted child would have beaten the search's best so far", on uniformly drawn states.
space_skip: certified not to beat the search's best so far, calibrated on the chosen
space_search variant's own cross-validated searches of the training problems (each child it
planned, with the adapted forecast it saw and the run's best then): search_space.py.

Metrics, keyed "<method>@<budget>", over held-out problem x seed pairs (ranked_order's order is
the same for every seed: it is counted once per seed so that every method has the same units):
- global_best_share_median (+ _ci): the best found within the budget / the landscape's global
  best (the best recorded speedup among all its candidates); to_within2pct_median (+ _ci):
  measurements until the best is within 2% of the global best, censored at budget + 1;
  within2pct_rate: the share of runs within 2% by the budget. 95% percentile bootstrap intervals
  of the median over problem x seed runs (workbench/landscape/truth.py).
- vs_ranked_order: over the same (problem, seed) pairs, the difference of to_within2pct medians
  (this minus ranked_order's; negative: fewer measurements) and of global_best_share medians, each
  with a paired bootstrap interval, and the mean paired gains with theirs.
- budget_fraction_to_match_median: GPU measurements until the run's best reaches measure_all's
  final best on the same problem, seed and budget (within tie_rel, the protocol's timing-noise
  tolerance: best >= target * (1 - tie_rel)), / budget; a run that never reaches it counts
  (budget + 1) / budget. `_ci`: 95% percentile bootstrap of the median over pairs.
- final_best_ratio_median: run's final best / measure_all's.
- for a method with its [random] control: vs_random_diff (mean over pairs of the control's
  fraction minus the method's: positive when the forecaster needs less budget) and
  vs_random_diff_ci (bootstrap of that mean over pairs, search_control.bootstrap_mean_ci).
- trusted_share (uncertainty_aware, certified_skip, space_skip): forecasts that stood in for a
  measurement / children considered.
- same_best_curve_as_screen_topk_share (uncertainty_aware, certified_skip and their controls;
  space_skip against space_search): runs whose best-so-far curve is identical to the ranking
  method's on the same problem, seed and budget.
- certified_skip, space_skip also: trusted_risk_observed (trusted children whose recorded speedup
  beat their reference, the parent's or the run's best when trusted, by more than the margin /
  trusted children, pooled over runs) next to trusted_risk_target; trusted_beat_best_share;
  trusted_measured (trusted children the loop measured later anyway: only when the generator runs
  dry); vs_screen_topk_final_best_ratio_median (final best / the ranking method's); _ci of
  trusted_share and trusted_risk_observed (bootstrap over runs of the pooled ratio) and `offered`:
  true only when that interval's upper end is at or below the target.

    python benchmarks/search_landscape.py --landscapes kernels_cache/landscapes/h200 --gpu h200 \
        --train-data kernels_cache/shipped

writes benchmarks/results/search-landscape-<gpu>.json when the data are real measurements and
every held-out problem has a landscape; otherwise only under --out.
"""
from __future__ import annotations

import argparse
import collections
import json
import math
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import commit, write_results  # noqa: E402
from search_bench import bench_spec, search_once  # noqa: E402
from search_control import (RandomScoreForecaster, bootstrap_mean_ci, censored_fraction,  # noqa: E402
                            control_name, protocol_factory, split_control, tie_floor)
import search_space as space  # noqa: E402

from workbench.dataset.shipped import load_shipped  # noqa: E402
from workbench.dataset.sources import RecordSet  # noqa: E402
from workbench.execution.executors import CacheExecutor  # noqa: E402
from workbench.landscape import LandscapeGenerator, load_protocol, read_landscapes  # noqa: E402
from workbench.landscape.protocol import cv_folds  # noqa: E402
from workbench.landscape.orders import random_order, ranked_order  # noqa: E402
from workbench.landscape.trust import calibration_pairs  # noqa: E402
from workbench.landscape.truth import curve_of_order, median_ci, paired, ratio_ci, truth_block  # noqa: E402
from workbench.problems import get_problem  # noqa: E402
from workbench.records import Status  # noqa: E402
from workbench.search import SearchRun, best_curve  # noqa: E402
from workbench.search.events import Archived, Measured, Trusted, decode_all  # noqa: E402
from workbench.search.methods import SkipCertificate, certify_skip, make_method  # noqa: E402
from workbench.spec import Target  # noqa: E402
from workbench.store import Store  # noqa: E402
from workbench.spec.registry import DEFAULTS, forecaster_names  # noqa: E402

RESULTS_DIR = Path(__file__).parent / "results"
BASELINE = "measure_all"
SKIP = "certified_skip"
SKIP_BEST = "certified_skip_best"
SKIP_METHODS = {SKIP: "parent", SKIP_BEST: "best"}  # method -> what a trusted child is judged against
SPACE, SPACE_SKIP = space.SPACE, space.SPACE_SKIP
SPACE_CONTROL = control_name(SPACE)
RANKED, RANDOM = "ranked_order", "random_order"
ORDERS = (RANKED, RANDOM)
METHODS = (BASELINE, "screen_topk", control_name("screen_topk"), "uncertainty_aware", control_name("uncertainty_aware"),
           SKIP, SPACE, SPACE_CONTROL, SPACE_SKIP)
#: What each trusting method is compared with (same_best_curve_as_screen_topk_share, vs_screen_topk_...).
RANKER = {"uncertainty_aware": "screen_topk", SKIP: "screen_topk", SKIP_BEST: "screen_topk", SPACE_SKIP: SPACE}
BUDGETS = (8, 16, 32, 64)
#: Methods added after that GPU's search results had been seen (reported as such, never a default).
POST_HOC = {"h200": (SKIP_BEST,)}
FIT_CACHE: list[str | None] = [None]  # --fit-cache (None: the user's cache folder)


def learned(records, searched: str):
    """The learned forecaster at its default settings, fitted on `records` (through the fit cache)."""
    from workbench.forecast.fitted import fit_or_load

    gpu = records.measurements[0].hardware_key if records.measurements else ""
    return fit_or_load(records.problems, records.candidates, records.measurements, hardware_key=gpu,
                       cache_dir=FIT_CACHE[0], progress=lambda msg: print(msg, file=sys.stderr))


def roofline(records, searched: str):
    from workbench.forecast.roofline import RooflineForecaster

    return RooflineForecaster()


#: One factory per registered benchmark forecaster (`workbench.spec.registry`, use "bench").
FORECASTERS = {name: {"learned": learned, "roofline": roofline}[name] for name in forecaster_names("bench")}


def fit_record(forecaster: str, records: RecordSet | None, protocol) -> dict[str, Any]:
    """What a forecaster was fitted on and how: its settings, the training problems and rows,
    and the split file's hash (recorded with every result)."""
    from workbench.forecast.fitted import learned_settings

    rs = protocol.training_only(records) if records is not None else None
    return {"forecaster": forecaster, "settings": learned_settings() if forecaster == "learned" else {},
            "training_problems": sorted({m.problem_id for m in rs.measurements}) if rs else [],
            "training_rows": len(rs.measurements) if rs else 0, "protocol_sha256": protocol.sha256,
            "heldout_excluded": list(protocol.heldout)}


def _split(method: str) -> tuple[str, str | None]:
    """split_control, knowing the space search's control too."""
    return (SPACE, "random") if method == SPACE_CONTROL else split_control(method)


def training_records(landscape_dir: Path, train_data: Sequence[Path], gpu: str, protocol) -> RecordSet:
    """Every row of `gpu` from the landscapes and the extra data (the protocol factory drops the
    held-out problems' rows before any fit)."""
    rs = RecordSet()
    for d in [landscape_dir, *train_data]:
        part = load_shipped(d)
        rs.problems += part.problems
        rs.candidates += part.candidates
        rs.measurements += [m for m in part.measurements if m.hardware_key == gpu]
    return rs


@dataclass(frozen=True)
class TrustSettings:
    """certified_skip's settings: target risk, delta, margin (a child "beats" its parent when its
    speedup > parent's * (1 + margin)), calibration folds, parents per training problem and
    children per parent."""

    risk: float = 0.1
    delta: float = 0.1
    margin: float = 0.0
    folds: int = 3
    parents: int = 32
    children: int = 16


def skip_certificate(lands, records: RecordSet, gpu: str, protocol, forecaster: str,
                     trust: TrustSettings, reference: str = "parent", groups=None
                     ) -> tuple[SkipCertificate, dict[str, Any]]:
    """The certified skip threshold from out-of-fold calibration pairs of the training landscapes,
    each child judged against `reference` ("parent" or "best": workbench/landscape/trust.py);
    `groups`: the problem folds (default: trust.folds folds of trust.problem_folds)."""
    make = protocol_factory(FORECASTERS[forecaster], protocol)
    hardware = CacheExecutor([m for m in records.measurements if m.hardware_key == gpu], gpu).hardware
    train = {pid: land for pid, land in lands.items() if not protocol.is_heldout(pid)}
    pairs = calibration_pairs(train, records, lambda rs: make(rs, ""), hardware, protocol, trust.parents,
                              trust.children, trust.folds, reference=reference, groups=groups)
    if not len(pairs):  # the forecaster abstained on every calibration child: nothing is certified
        cert = SkipCertificate(float("inf"), trust.risk, trust.delta, trust.margin, 0, 0.0, 0.0, reference)
    else:
        cert = certify_skip(pairs.probabilities, pairs.reference_speedups, pairs.child_speedups, trust.risk,
                            trust.delta, trust.margin, reference)
    return cert, {**cert.to_dict(), **pairs.describe()}


def certified_search(store, problem, executor, generator, forecaster, seed: int, budget: int, k: int, m: int,
                     certificate: SkipCertificate, speed: dict[str, float]) -> dict[str, Any]:
    """One certified_skip search (as search_once), plus what its trusted children were really
    worth, read from the landscape's recorded speedups `speed` (NaN: failed)."""
    run = SearchRun(store, problem, executor, generator, forecaster,
                    make_method(SKIP, k=k, m=m, certificate=certificate), budget=budget, seed=seed,
                    adapt_forecasts=False)
    while run.step():
        pass
    summary = run.summary()
    events = decode_all(store.events(run.search_id))
    parent_of = {e.entry.candidate_id: e.entry.parent_id for e in events
                 if isinstance(e, Archived) and e.entry.kind == "trusted"}
    best, trusted, beat_parent, beat_best, measured = -math.inf, [], 0, 0, set()
    for e in events:
        if isinstance(e, Measured):
            x = e.measurement
            measured.add(x.candidate_id)
            if x.status is Status.OK and x.speedup:
                best = max(best, x.speedup)
        elif isinstance(e, Trusted):
            cid = e.candidate_id
            child, parent = speed.get(cid, math.nan), speed.get(parent_of.get(cid) or "", math.nan)
            trusted.append(cid)
            if math.isfinite(child) and math.isfinite(parent) and child > parent * (1 + certificate.margin):
                beat_parent += 1
            if math.isfinite(child) and best > -math.inf and child > best * (1 + certificate.margin):
                beat_best += 1
    return {"finished": summary["finished"], "problem_id": problem.id, "method": SKIP, "seed": seed,
            "trusted_beat_reference": beat_best if certificate.reference == "best" else beat_parent,
            "budget": budget, "best_speedup": summary["best_speedup"] or 0.0,
            "gpu_measurements": summary["gpu_measurements"], "considered": summary["candidates_considered"],
            "trusted": summary["trusted"], "finish_reason": summary["finish_reason"],
            "curve": best_curve(events), "trusted_beat_parent": beat_parent, "trusted_beat_best": beat_best,
            "trusted_measured": len(set(trusted) & measured)}


@dataclass(frozen=True)
class SpaceSettings:
    """The space search's inner cross-validation: problem folds, search seeds and budget."""

    folds: int = space.CV_FOLDS
    seeds: int = 5
    budget: int = space.CV_BUDGET


def _whole_training(lands, rs, gpu: str, protocol) -> list[str]:
    """The training problems whose landscape is measured whole on `gpu` (the space search's CV
    problems)."""
    n = collections.Counter(x.problem_id for x in rs.measurements if x.hardware_key == gpu)
    return sorted(pid for pid, land in lands.items() if not protocol.is_heldout(pid) and n[pid] >= len(land.points))


def _space_setup(lands, rs, records, gpu: str, protocol, forecaster: str, k: int, m: int,
                 trust: TrustSettings, cv: SpaceSettings, want_skip: bool) -> tuple[float, Any, dict[str, Any]]:
    """The space search's restart share (inner CV on the training landscapes) and, when
    `want_skip`, space_skip's certificate from the chosen variant's search states."""
    make = protocol_factory(FORECASTERS[forecaster], protocol)
    cases = {pid: space.SpaceCase.of(get_problem(pid), lands[pid], [x for x in rs.measurements if
                                                                    x.problem_id == pid and x.hardware_key == gpu])
             for pid in _whole_training(lands, rs, gpu, protocol)}
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="search_space_cv_") as tmp:
        n = iter(range(10**9))
        choice, states, cv_runs, cv_info = space.choose_variant(
            cases, records, protocol, gpu, lambda r: make(r, ""), list(range(cv.seeds)), k, m, budget=cv.budget,
            folds=cv.folds, store_factory=lambda: Store(Path(tmp) / f"cv{next(n)}.sqlite"),
            log=lambda msg: print(f"space_search CV: {msg}", file=sys.stderr))
    ranked = cv_info["ranked_order_to_within2pct"]
    info: dict[str, Any] = {"variants": space.VARIANTS, "choice": choice.to_dict(), "cv_budget": cv.budget,
                            "cv_seeds": cv.seeds, "cv_fold_fit_s": cv_info["fold_fit_s"],
                            "cv_ranked_order_to_within2pct": ranked,
                            "cv_ranked_order_to_within2pct_mean": sum(ranked.values()) / len(ranked),
                            "seconds": round(time.time() - t0, 1),
                            "cv_problems": sorted(cases),
                            "cv_runs": {v: len(r) for v, r in cv_runs.items()}}
    cert = None
    if want_skip:
        cert, info[SPACE_SKIP] = space.search_certificate(states[choice.chosen], trust.risk, trust.delta,
                                                          trust.margin, "best")
    return space.VARIANTS[choice.chosen], cert, info


def _order_runs(case, scores: dict[str, float], budgets: Sequence[int], seeds: Sequence[int]) -> list[dict[str, Any]]:
    """ranked_order's and random_order's runs of one problem, in the search runs' shape."""
    ids = list(case.space.candidates)
    out = []
    for budget in budgets:
        for seed in seeds:
            for name, order in ((RANKED, ranked_order(ids, scores)),
                                (RANDOM, random_order(ids, seed, case.problem.id))):
                curve = curve_of_order(order, case.speed, budget)
                out.append({"finished": True, "problem_id": case.problem.id, "method": name, "seed": seed,
                            "budget": budget, "best_speedup": curve[-1][1] if curve else 0.0,
                            "gpu_measurements": min(budget, len(order)), "considered": min(budget, len(order)),
                            "trusted": 0, "finish_reason": "budget spent" if budget <= len(order) else "exhausted",
                            "curve": [list(x) for x in curve]})
    return out


def run_searches(landscape_dir: Path, gpu: str, budgets: Sequence[int], seeds: Sequence[int], protocol,
                 forecaster: str = "learned", train_data: Sequence[Path] = (), k: int = 4, m: int = 4,
                 methods: Sequence[str] = METHODS, trust: TrustSettings | None = None,
                 cv: SpaceSettings | None = None, orders: bool = True) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    trust = trust or TrustSettings()
    lands = read_landscapes(landscape_dir)
    held = [pid for pid in protocol.heldout if pid in lands]
    if not held:
        raise SystemExit(f"{landscape_dir} holds no landscape of a held-out problem ({', '.join(protocol.heldout)})")
    rs = load_shipped(landscape_dir)
    # Only whole landscapes are searched: a replay over a partly measured one would draw only
    # from the points that happened to be measured.
    measured = collections.Counter(x.problem_id for x in rs.measurements if x.hardware_key == gpu)
    partial = {pid: f"{measured[pid]}/{len(lands[pid].points)}" for pid in held
               if measured[pid] < len(lands[pid].points)}
    held = [pid for pid in held if pid not in partial]
    if not held:
        raise SystemExit(f"{landscape_dir}: no held-out landscape is measured whole ({partial})")
    fit = orders or any(_split(x)[1] is None and x != BASELINE for x in methods)
    t0 = time.time()
    records = training_records(landscape_dir, train_data, gpu, protocol) if fit else None
    fc = protocol_factory(FORECASTERS[forecaster], protocol)(records, "") if fit else None
    fit_s = round(time.time() - t0, 1)
    info: dict[str, Any] = {"heldout_searched": held, "heldout_partial_skipped": partial, "forecaster_fit_s": fit_s,
                            "forecaster_fit": fit_record(forecaster, records, protocol),
                            # what the forecaster and certified_skip's calibration could draw on
                            "training_landscapes_measured": {pid: f"{measured[pid]}/{len(land.points)}"
                                                             for pid, land in lands.items()
                                                             if not protocol.is_heldout(pid)}}
    certs = {}
    spaced = bool({SPACE, SPACE_CONTROL, SPACE_SKIP} & set(methods))
    # With the space search, the skip calibration folds are its inner-CV folds: one fit per fold serves both.
    groups = cv_folds(_whole_training(lands, rs, gpu, protocol), (cv or SpaceSettings()).folds, space.CV_SEED) \
        if spaced else None
    for name, reference in SKIP_METHODS.items():
        if name in methods:
            t0 = time.time()
            certs[name], info[name] = skip_certificate(lands, records, gpu, protocol, forecaster, trust, reference,
                                                       groups)
            info[name]["seconds"] = round(time.time() - t0, 1)
    share, space_cert = None, None
    if spaced:
        share, space_cert, info[SPACE] = _space_setup(lands, rs, records, gpu, protocol, forecaster, k, m, trust,
                                                      cv or SpaceSettings(), SPACE_SKIP in methods)
    runs: list[dict[str, Any]] = []
    t_held = time.time()
    for i, pid in enumerate(held):
        print(f"held-out {i + 1}/{len(held)}: {pid} ({time.time() - t_held:.0f} s into the held-out searches)",
              file=sys.stderr, flush=True)
        problem = get_problem(pid)
        ms = [x for x in rs.measurements if x.problem_id == pid and x.hardware_key == gpu]
        case = space.SpaceCase.of(problem, lands[pid], ms)
        hw = CacheExecutor(ms, gpu).hardware
        if orders:
            runs += _order_runs(case, case.screen(fc, hw), budgets, seeds)
        with tempfile.TemporaryDirectory(prefix="search_landscape_") as tmp, Store(Path(tmp) / "s.sqlite") as store:
            for budget in budgets:
                for method in methods:
                    t_method = time.time()
                    base, control = _split(method)
                    for seed in seeds:
                        ex = CacheExecutor(ms, gpu)
                        gen = LandscapeGenerator([lands[pid]], ex.candidate_ids)
                        f = RandomScoreForecaster(seed) if control else (fc if base != BASELINE else None)
                        if base == SPACE:
                            r = space.space_run(store, case, f, gpu, seed, budget, share, k, m, name=method)
                        elif base == SPACE_SKIP:
                            r = space.space_run(store, case, f, gpu, seed, budget, share, k, m, space_cert,
                                                name=method, keep_events=True)
                            r = space.skip_trust(r, r.pop("events"), case.speed, space_cert.margin)
                        elif base in certs:
                            r = certified_search(store, problem, ex, gen, f, seed, budget, k, m, certs[base],
                                                 case.speed)
                        else:
                            spec = bench_spec(pid, Target("replay", key=gpu), budget, k, m, forecaster,
                                              reference_time="measured")  # LearnedForecaster()'s
                            r = search_once(store, spec.replace(method=base, seed=seed), problem, ex, gen, f)
                        r["method"] = method
                        runs.append(r)
                    print(f"  {method}@{budget}: {len(seeds)} seeds in {time.time() - t_method:.1f} s",
                          file=sys.stderr, flush=True)
        info.setdefault("global_best", {})[pid] = case.best
    return runs, info


def _skip_block(rs: list[dict[str, Any]], runs: list[dict[str, Any]], budget: int, target_risk: float | None,
                ranker: str = "screen_topk") -> dict[str, Any]:
    """A certified skip method's trust metrics over its runs `rs` at `budget` (module docstring)."""
    trusted = sum(r["trusted"] for r in rs)
    top = {(r["problem_id"], r["seed"]): r["best_speedup"] for r in runs
           if r["method"] == ranker and r["budget"] == budget}
    vs = [r["best_speedup"] / top[(r["problem_id"], r["seed"])] for r in rs if top.get((r["problem_id"], r["seed"]))]
    beat = sum(r["trusted_beat_reference"] for r in rs)
    return {"trusted_risk_observed": beat / trusted if trusted else None,
            "trusted_risk_target": target_risk, "trusted_children": trusted,
            "trusted_beat_best_share": sum(r["trusted_beat_best"] for r in rs) / trusted if trusted else None,
            "trusted_measured": sum(r["trusted_measured"] for r in rs),
            "vs_screen_topk_final_best_ratio_median": statistics.median(vs) if vs else None}


def _trust_cis(rs: list[dict[str, Any]], target_risk: float | None) -> dict[str, Any]:
    """A certified skip method's bootstrap intervals (over runs) of the pooled trusted share and
    observed risk, and whether the rule is offered (the risk interval's upper end at or below the
    target)."""
    share_ci = ratio_ci([r["trusted"] for r in rs], [r["considered"] for r in rs])
    risk_ci = ratio_ci([r["trusted_beat_reference"] for r in rs], [r["trusted"] for r in rs])
    offered = risk_ci is not None and target_risk is not None and risk_ci[1] <= target_risk
    return {"trusted_share_ci": share_ci, "trusted_risk_observed_ci": risk_ci, "offered": offered,
            "offered_rule": "offered only when the upper end of trusted_risk_observed_ci <= trusted_risk_target"}


def _same_curve_share(rs: list[dict[str, Any]], runs: list[dict[str, Any]], other: str) -> float | None:
    """Share of the runs `rs` whose best-so-far curve equals the `other` method's run on the same
    problem, seed and budget (None when `other` has no such run)."""
    curves = {(r["problem_id"], r["seed"], r["budget"]): r["curve"] for r in runs if r["method"] == other}
    pairs = [(r["curve"], curves[k]) for r in rs if (k := (r["problem_id"], r["seed"], r["budget"])) in curves]
    return sum(a == b for a, b in pairs) / len(pairs) if pairs else None


def score(runs: list[dict[str, Any]], tie_rel: float, target_risk: float | None = None,
          bests: dict[str, float] | None = None) -> dict[str, dict[str, Any]]:
    """The module docstring's metrics from the runs (`target_risk`: the certified skip rules';
    `bests`: each problem's global best, for the truth metrics)."""
    floor = tie_floor(tie_rel)
    target = {(r["problem_id"], r["seed"], r["budget"]): r["best_speedup"] for r in runs if r["method"] == BASELINE}
    frac: dict[tuple, float] = {}
    out: dict[str, dict[str, Any]] = {}
    for r in runs:
        t = target.get((r["problem_id"], r["seed"], r["budget"]))
        if t:
            frac[(r["method"], r["problem_id"], r["seed"], r["budget"])] = censored_fraction(r, t, floor)
    for method in dict.fromkeys(r["method"] for r in runs):
        for budget in sorted({r["budget"] for r in runs}):
            rs = [r for r in runs if r["method"] == method and r["budget"] == budget]
            fr = [frac[(method, r["problem_id"], r["seed"], budget)] for r in rs
                  if (method, r["problem_id"], r["seed"], budget) in frac]
            ratios = [r["best_speedup"] / target[(r["problem_id"], r["seed"], budget)] for r in rs
                      if target.get((r["problem_id"], r["seed"], budget))]
            block: dict[str, Any] = {
                "runs": len(rs), "budget_fraction_to_match_median": statistics.median(fr) if fr else None,
                "budget_fraction_to_match_median_ci": median_ci(fr),
                "final_best_ratio_median": statistics.median(ratios) if ratios else None,
                "match_rate": sum(f <= 1 for f in fr) / len(fr) if fr else None}
            if bests:
                block.update(truth_block(rs, bests))
                ranked = [r for r in runs if r["method"] == RANKED and r["budget"] == budget]
                if ranked and method != RANKED:
                    block["vs_ranked_order"] = paired(rs, ranked, bests)
            base, control = (method, None) if method in ORDERS else _split(method)
            if base in ("uncertainty_aware", *SKIP_METHODS, SPACE_SKIP):
                considered = sum(r["considered"] for r in rs)
                block["trusted_share"] = sum(r.get("trusted") or 0 for r in rs) / considered if considered else None
                ranker = RANKER[base]
                block["same_best_curve_as_screen_topk_share"] = _same_curve_share(
                    rs, runs, control_name(ranker) if control else ranker)
            if method in (*SKIP_METHODS, SPACE_SKIP):
                block.update(_skip_block(rs, runs, budget, target_risk, RANKER[method]))
            if method in (*SKIP_METHODS, SPACE_SKIP):
                block.update(_trust_cis(rs, target_risk))
            ctl = control_name(method) if control is None and method not in (BASELINE, *ORDERS) else None
            if ctl and any(r["method"] == ctl for r in runs):
                diffs = [frac[(ctl, p, s, budget)] - frac[(method, p, s, budget)]
                         for (mm, p, s, b) in frac if mm == method and b == budget and (ctl, p, s, budget) in frac]
                block["vs_random_diff"] = statistics.fmean(diffs) if diffs else None
                block["vs_random_diff_ci"] = bootstrap_mean_ci(diffs)
                block["vs_random_pairs"] = len(diffs)
            out[f"{method}@{budget}"] = block
    return out


def acceptance(metrics: dict[str, dict[str, Any]], budget: int = 16) -> dict[str, Any]:
    """The issue's targets read from the metrics, for the search designed for them (space_search,
    fixed before any held-out run) at `budget`, and whether each certified skip rule is offered."""
    out: dict[str, Any] = {}
    block, ranked = metrics.get(f"{SPACE}@{budget}"), metrics.get(f"{RANKED}@{budget}")
    if block and ranked and block.get("global_best_share_median") is not None:
        vs = block.get("vs_ranked_order", {})
        out[SPACE] = {
            "budget": budget, "global_best_share_median": block["global_best_share_median"],
            "global_best_share_median_ci": block["global_best_share_median_ci"],
            "global_best_share_target": 0.99,
            "global_best_share_met": block["global_best_share_median"] >= 0.99,
            "to_within2pct_median": block["to_within2pct_median"],
            "ranked_order_to_within2pct_median": ranked["to_within2pct_median"],
            "to_within2pct_median_diff_vs_ranked": vs.get("to_within2pct_median_diff"),
            "to_within2pct_median_diff_vs_ranked_ci": vs.get("to_within2pct_median_diff_ci"),
            "global_best_share_median_diff_vs_ranked": vs.get("global_best_share_median_diff"),
            "global_best_share_median_diff_vs_ranked_ci": vs.get("global_best_share_median_diff_ci"),
            "no_more_measurements_than_ranked_order": block["to_within2pct_median"] <= ranked["to_within2pct_median"]}
    for name in (*SKIP_METHODS, SPACE_SKIP):
        skips = {k: v for k, v in metrics.items() if k.startswith(f"{name}@")}
        if skips:
            out[name] = {k.split("@")[1]: {"offered": v.get("offered"), "trusted_share": v.get("trusted_share"),
                                           "trusted_risk_observed": v.get("trusted_risk_observed"),
                                           "trusted_risk_observed_ci": v.get("trusted_risk_observed_ci"),
                                           "trusted_risk_target": v.get("trusted_risk_target")}
                         for k, v in skips.items()}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--landscapes", type=Path, required=True, help="a shipped landscape folder (landscape_bench --merge)")
    ap.add_argument("--gpu", default="h100")
    ap.add_argument("--budgets", default=",".join(map(str, BUDGETS)))
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--k", type=int, default=DEFAULTS["k"], help="children measured per parent")
    ap.add_argument("--m", type=int, default=DEFAULTS["m"], help="children generated per measured child (16 = 4 x 4)")
    ap.add_argument("--forecaster", choices=tuple(FORECASTERS), default=DEFAULTS["forecaster"])
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--train-data", type=Path, nargs="*", default=[],
                    help="more shipped data to fit on (held-out problems' rows are dropped)")
    ap.add_argument("--protocol", type=Path, default=None)
    ap.add_argument("--trust-risk", type=float, default=TrustSettings.risk,
                    help="certified_skip: target rate of trusted children that beat their parent")
    ap.add_argument("--trust-delta", type=float, default=TrustSettings.delta,
                    help="certified_skip: the guarantee fails with probability at most this")
    ap.add_argument("--trust-margin", type=float, default=TrustSettings.margin,
                    help="certified_skip: a child beats its parent when faster by more than this fraction")
    ap.add_argument("--trust-folds", type=int, default=TrustSettings.folds,
                    help="certified_skip: training-problem folds of the out-of-fold calibration forecasts "
                         "(one forecaster fit each)")
    ap.add_argument("--trust-parents", type=int, default=TrustSettings.parents,
                    help="certified_skip: calibration parents per training problem")
    ap.add_argument("--cv-folds", type=int, default=SpaceSettings.folds,
                    help="space_search: inner cross-validation folds over the training problems")
    ap.add_argument("--cv-seeds", type=int, default=SpaceSettings.seeds, help="space_search: search seeds per fold problem")
    ap.add_argument("--cv-budget", type=int, default=SpaceSettings.budget, help="space_search: budget of the CV searches")
    ap.add_argument("--no-orders", action="store_true", help="leave out ranked_order and random_order")
    ap.add_argument("--fit-cache", default=None, help="the fitted-forecaster cache folder (default: the user's)")
    ap.add_argument("--out", type=Path, default=None, help="also write the results file here")
    args = ap.parse_args(argv)
    FIT_CACHE[0] = args.fit_cache
    protocol = load_protocol(args.protocol)
    budgets = [int(b) for b in args.budgets.split(",") if b]
    methods = [x for x in args.methods.split(",") if x]
    if BASELINE not in methods:
        ap.error("measure_all is every metric's reference: keep it in --methods")
    t0 = time.time()
    trust = TrustSettings(args.trust_risk, args.trust_delta, args.trust_margin, args.trust_folds,
                          args.trust_parents, args.k * args.m)
    cv = SpaceSettings(args.cv_folds, args.cv_seeds, args.cv_budget)
    runs, info = run_searches(args.landscapes, args.gpu, budgets, list(range(args.seeds)), protocol, args.forecaster,
                              args.train_data, args.k, args.m, methods, trust, cv, not args.no_orders)
    synthetic = any(x.reason == "synthetic" for x in load_shipped(args.landscapes).measurements)
    metrics = score(runs, protocol.tie_rel, trust.risk if {*SKIP_METHODS, SPACE_SKIP} & set(methods) else None,
                    info["global_best"])
    doc = {"benchmark": "search-landscape", "gpu": args.gpu, "date": time.strftime("%Y-%m-%d"), "commit": commit(),
           "metrics": metrics, "acceptance": acceptance(metrics),
           "setup": {"protocol": protocol.describe(), "budgets": budgets, "seeds": args.seeds, "k": args.k,
                     "m": args.m, "children_per_parent": args.k * args.m, "methods": methods,
                     "forecaster": args.forecaster, "train_data": [str(p) for p in args.train_data],
                     "orders": [] if args.no_orders else list(ORDERS),
                     "landscapes": str(args.landscapes), "tie_rel": protocol.tie_rel, "synthetic": synthetic,
                     "post_hoc_methods": sorted(set(methods) & set(POST_HOC.get(args.gpu, ()))),
                     "seconds": round(time.time() - t0, 1), **info},
           "runs": runs}
    name = f"search-landscape-{args.gpu}.json"
    full = not synthetic and set(info["heldout_searched"]) == set(protocol.heldout) and args.seeds >= 5
    for p in write_results(RESULTS_DIR, name, json.dumps(doc, indent=1, default=float) + "\n", full, args.out,
                           "a partial or synthetic run is not a result: pass --out DIR to keep it"):
        print(f"wrote {p}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
