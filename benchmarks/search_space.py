"""The space search of benchmarks/search_landscape.py: variants chosen by inner cross-validation
on the training landscapes, and its certified skip rule calibrated on its own search states.

`space_search` is a PUCT search over the landscape's whole enumerable space
(`workbench.search.space.SpaceGenerator`): its 4 seeds are the forecaster's top 4 of the whole
space, each parent's 16 children are restarts (the best-screened candidates not yet measured,
re-proposed until measured) and moves (one or two parameters, the algorithm with the nearest
re-fit, three or four parameters at once), and `screen_topk` measures the 4 of them with the
highest expected log2 speedup under the run's adapted forecasts. `space_search[random]` is the
same search with seeded random scores for the screen and the ranking (the control).

Variant choice (`choose_variant`): the share of each child list that is restarts
(`VARIANTS`) is chosen by `workbench.landscape.protocol.inner_cv_choose` over the training
problems only: in each fold a forecaster is fitted on the other folds' training rows (the
held-out problems and the fold's own rows removed), the fold's problems are searched at
`CV_BUDGET` for every seed, and a variant scores the mean over those runs of the measurements
until within 2% of the landscape's global best (censored at budget + 1; lower is better).

`space_skip` is the chosen search with `certified_skip` in place of `screen_topk`: a child is
trusted (never measured) when its forecast is certified not to beat the search's best so far.
The certificate (`search_certificate`) is calibrated on the chosen variant's own cross-validated
searches of the training problems (every child it planned, with the forecast it saw and the
run's best at that moment, judged by the landscape's recorded speedup: `search_state_pairs`),
so each forecast is out of fold and each state is a state of the same search.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from workbench.dataset.sources import RecordSet
from workbench.execution.executors import CacheExecutor
from workbench.landscape.protocol import Protocol, inner_cv_choose
from workbench.landscape.trust import pairs_from_states, search_state_pairs
from workbench.landscape.orders import ranked_order
from workbench.landscape.truth import curve_of_order, to_within
from workbench.search import SearchRun, best_curve, make_method
from workbench.search.events import decode_all
from workbench.search.methods import SkipCertificate, certify_skip
from workbench.search.space import Space, SpaceGenerator, forecast_screen

SPACE = "space_search"
SPACE_SKIP = "space_skip"
#: Variant name -> share of each parent's children that are restarts.
VARIANTS = {"restarts_0": 0.0, "restarts_25": 0.25, "restarts_50": 0.5, "restarts_75": 0.75, "restarts_100": 1.0}
CV_BUDGET = 64
CV_FOLDS = 5
CV_SEED = 0


@dataclass
class SpaceCase:
    """One problem prepared for space searches: its measurements on the GPU, recorded speedups
    (NaN: failed), global best, and the space of its measured candidates."""

    problem: Any
    measurements: list
    speed: dict[str, float]
    best: float
    space: Space
    _screens: dict[int, tuple[Any, dict[str, float]]] = field(default_factory=dict)

    @classmethod
    def of(cls, problem, landscape, measurements) -> "SpaceCase":
        speed = {m.candidate_id: (float(m.speedup) if m.ok and m.speedup else math.nan) for m in measurements}
        ok = [s for s in speed.values() if math.isfinite(s)]
        return cls(problem, list(measurements), speed, max(ok) if ok else math.nan,
                   Space.from_landscape(landscape, set(speed)))

    def screen(self, forecaster, hardware) -> dict[str, float]:
        """The forecaster's expected log2 speedup of every candidate of the space (once per
        forecaster object)."""
        key = id(forecaster)  # the forecaster is kept with its scores, so its id is never reused
        if key not in self._screens:
            scores = forecast_screen(forecaster, hardware)(self.problem, list(self.space.candidates.values()))
            self._screens[key] = (forecaster, dict(scores))
        return self._screens[key][1]


def space_run(store, case: SpaceCase, forecaster, gpu: str, seed: int, budget: int, restart_share: float,
              k: int = 4, m: int = 4, certificate: SkipCertificate | None = None, screen_by=None,
              name: str = SPACE, keep_events: bool = False) -> dict[str, Any]:
    """One space search of `case` (screen_topk, or certified_skip with `certificate`), forecasts
    adapted to the run's measurements; the screen is `screen_by`'s (default: `forecaster`'s).
    Returns the run record (with "events" when `keep_events`)."""
    ex = CacheExecutor(case.measurements, gpu)
    scores = case.screen(screen_by or forecaster, ex.hardware)
    gen = SpaceGenerator([case.space], screen=lambda _p, cands: {c.id: scores[c.id] for c in cands},
                         restart_share=restart_share)
    method = make_method("certified_skip", k=k, m=m, certificate=certificate) if certificate is not None \
        else make_method("screen_topk", k=k, m=m)
    run = SearchRun(store, case.problem, ex, gen, forecaster, method, budget=budget, seed=seed,
                    adapt_forecasts=True, name=name)
    while run.step():
        pass
    s = run.summary()
    events = decode_all(store.events(run.search_id))
    out = {"finished": s["finished"], "problem_id": case.problem.id, "method": name, "seed": seed,
           "budget": budget, "best_speedup": s["best_speedup"] or 0.0, "gpu_measurements": s["gpu_measurements"],
           "considered": s["candidates_considered"], "trusted": s["trusted"], "finish_reason": s["finish_reason"],
           "curve": best_curve(events)}
    if keep_events:
        out["events"] = events
    return out


def fold_protocol(protocol: Protocol, validation: Sequence[str]) -> Protocol:
    """The protocol with the validation problems held out too (their rows leave every fit)."""
    return Protocol(protocol.training, tuple(protocol.heldout) + tuple(validation), protocol.tie_rel,
                    protocol.path, protocol.sha256)


def choose_variant(cases: dict[str, SpaceCase], records: RecordSet, protocol: Protocol, gpu: str,
                   fit: Callable[[RecordSet], Any], seeds: Sequence[int], k: int = 4, m: int = 4,
                   variants: dict[str, float] | None = None, budget: int = CV_BUDGET, folds: int = CV_FOLDS,
                   store_factory: Callable[[], Any] | None = None, log: Callable[[str], None] = lambda s: None):
    """Inner cross-validation of the space search's variants on the training `cases` (module
    doc). `fit(records)` fits a forecaster on the given rows (already without held-out and
    validation rows). Returns (Choice, {variant: search-state pairs of its runs}, {variant: runs},
    {"fold_fit_s", "ranked_order_to_within2pct": ranked_order's measurements until within 2% on
    each training problem under its fold's forecaster, for comparison})."""
    variants = dict(VARIANTS if variants is None else variants)
    train_ids = sorted(cases)
    protocol.check_fit(train_ids, "choosing the space search's variant")
    fits: dict[frozenset, Any] = {}
    fit_s: dict[str, float] = {}
    ranked: dict[str, int] = {}  # validation problem -> ranked_order's to_within2pct at the CV budget
    states: dict[str, list] = {v: [] for v in variants}
    runs: dict[str, list] = {v: [] for v in variants}

    def score(share: float, train: list[str], validation: list[str]) -> float:
        key = frozenset(train)
        if key not in fits:
            t0 = time.time()
            fits[key] = fit(fold_protocol(protocol, validation).training_only(records))
            fit_s[",".join(sorted(validation))] = round(time.time() - t0, 1)
            log(f"fold without {', '.join(sorted(validation))}: fitted in {fit_s[','.join(sorted(validation))]} s")
        fc = fits[key]
        name = next(n for n, v in variants.items() if v == share)
        vals = []
        for pid in validation:
            case = cases[pid]
            if pid not in ranked:  # the reference order under the same fold's forecaster
                scores = case.screen(fc, CacheExecutor(case.measurements, gpu).hardware)
                order = ranked_order(list(case.space.candidates), scores)
                ranked[pid] = to_within(curve_of_order(order, case.speed, budget), case.best, budget)
            with store_factory() as store:
                for seed in seeds:
                    r = space_run(store, case, fc, gpu, seed, budget, share, k, m, keep_events=True)
                    states[name] += search_state_pairs(r.pop("events"), case.speed, pid, seed)
                    runs[name].append(r)
                    vals.append(to_within(r["curve"], case.best, budget))
        ref = [ranked[pid] for pid in validation]
        log(f"{name} on {', '.join(validation)}: mean to_within2pct {sum(vals) / len(vals):.1f} "
            f"(ranked_order {sum(ref) / len(ref):.1f})")
        return sum(vals) / len(vals)

    if len(set(variants.values())) != len(variants):
        raise ValueError("every variant needs its own restart share")
    choice = inner_cv_choose(variants, train_ids, score, protocol, folds=folds, seed=CV_SEED,
                             higher_is_better=False)
    log(f"ranked_order on the same folds: mean to_within2pct {sum(ranked.values()) / len(ranked):.1f}")
    return choice, states, runs, {"fold_fit_s": fit_s, "ranked_order_to_within2pct": ranked}


def search_certificate(states, risk: float, delta: float, margin: float, reference: str = "best"
                       ) -> tuple[SkipCertificate, dict[str, Any]]:
    """The certified skip threshold from search-state pairs (judged against `reference`)."""
    pairs = pairs_from_states(states, reference)
    if not len(pairs):
        cert = SkipCertificate(float("inf"), risk, delta, margin, 0, 0.0, 0.0, reference)
    else:
        cert = certify_skip(pairs.probabilities, pairs.reference_speedups, pairs.child_speedups, risk, delta,
                            margin, reference)
    beat = sum(1 for p in pairs.pairs if math.isfinite(p.child_speedup)
               and p.child_speedup > p.reference_speedup * (1 + margin))
    return cert, {**cert.to_dict(), "pairs": len(pairs), "problems": sorted({p.problem_id for p in pairs.pairs}),
                  "base_rate": beat / len(pairs) if len(pairs) else None,
                  "states": "the chosen space_search variant's cross-validated searches of the training problems"}


def skip_trust(run: dict[str, Any], events, speed: dict[str, float], margin: float) -> dict[str, Any]:
    """What a space_skip run's trusted children were worth: how many beat the run's best when
    they were trusted (`trusted_beat_best`), or their parent (`trusted_beat_parent`), by their
    recorded speedups `speed`."""
    from workbench.search.events import Archived, Measured, Trusted

    parent_of = {e.entry.candidate_id: e.entry.parent_id for e in events
                 if isinstance(e, Archived) and e.entry.kind == "trusted"}
    best, measured, seen, trusted, beat_best, beat_parent = -math.inf, {}, set(), set(), 0, 0
    for e in events:
        if isinstance(e, Measured):
            x = e.measurement
            seen.add(x.candidate_id)
            if x.ok and x.speedup:
                measured[x.candidate_id] = float(x.speedup)
                best = max(best, float(x.speedup))
        elif isinstance(e, Trusted):
            cid = e.candidate_id
            trusted.add(cid)
            child = speed.get(cid, math.nan)
            parent = measured.get(parent_of.get(cid) or "", math.nan)
            if math.isfinite(child) and best > -math.inf and child > best * (1 + margin):
                beat_best += 1
            if math.isfinite(child) and math.isfinite(parent) and child > parent * (1 + margin):
                beat_parent += 1
    return {**run, "trusted_beat_best": beat_best, "trusted_beat_parent": beat_parent,
            "trusted_beat_reference": beat_best,
            "trusted_measured": len(trusted & seen)}
