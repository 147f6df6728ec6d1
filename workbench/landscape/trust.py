"""Calibration pairs for the certified skip rule (`workbench.search.methods.CertifiedSkip`),
drawn from measured landscapes of TRAINING problems only.

A pair is (a parent point, one child from its stored neighbourhood): the child's forecast, the
parent's measured speedup and the child's measured speedup (NaN when it failed). Parents are
drawn uniformly from a problem's correct measured points (seeded by the problem id and `seed`),
children uniformly from the parent's measured neighbourhood, as `LandscapeGenerator` draws a
search's children. Every forecast is *out of fold*: the training problems are split into
`folds` groups and each group's children are forecast by a forecaster fitted on the other
groups only (`make_forecaster(records)` is called with the other groups' rows), so the
calibration sees the errors the forecaster makes on problems it was not fitted on, as the
searched held-out problems will. The protocol refuses held-out problems here
(HeldOutLeakError) and the pair sets never hold one.

Each pair carries the speedup its child is judged against, its *reference*: with
`reference="parent"` the parent's; with `reference="best"` the best speedup a search would hold
when the parent's children are drawn, stood in for by the best of the parent and `k` other
correct points of the landscape drawn uniformly, `k` itself drawn uniformly from
`BEST_STATE_POINTS` (the states of a search with up to 64 measurements).

What the pairs do not match: a search picks parents by PUCT (better points more often), holds a
best drawn from its own path rather than from uniform points, and its children may come from
trusted parents; the benchmark therefore reports the rate observed in the searches themselves
next to the certified target.

`search_state_pairs` takes the other road: pairs from a replayed search's own states (each child
a method planned, with the forecast it saw, its parent and the search's best at that moment,
labelled by the landscape's recorded speedup), so a rule calibrated on searches of training
problems is calibrated on the states of the search it will run in.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from workbench.calibration.metrics import rankdata
from workbench.dataset.sources import RecordSet
from workbench.errors import ConfigError
from workbench.landscape.core import Landscape
from workbench.landscape.protocol import Protocol
from workbench.records import Measurement

REFERENCES = ("parent", "best")
#: "best" reference: how many other measured points (besides the parent) a search state holds.
BEST_STATE_POINTS = (1, 63)


@dataclass(frozen=True)
class PairSample:
    """One calibration pair's ids and measured speedups (child NaN: it failed) and the speedup
    the child is judged against (`reference_speedup`: the parent's, or a search state's best)."""

    problem_id: str
    parent_id: str
    child_id: str
    parent_speedup: float
    child_speedup: float
    reference_speedup: float = math.nan

    def __post_init__(self):
        if math.isnan(self.reference_speedup):
            object.__setattr__(self, "reference_speedup", self.parent_speedup)


@dataclass
class CalibrationPairs:
    """Forecast calibration pairs: `probabilities` (n, 8), `parent_speedups` (n,),
    `child_speedups` (n,, NaN = failed), `reference_speedups` (n,, what each child is judged
    against, per `reference`), the pairs themselves and the problem folds used."""

    probabilities: np.ndarray
    parent_speedups: np.ndarray
    child_speedups: np.ndarray
    pairs: list[PairSample] = field(default_factory=list)
    folds: list[list[str]] = field(default_factory=list)
    reference: str = "parent"

    @property
    def reference_speedups(self) -> np.ndarray:
        return np.asarray([p.reference_speedup for p in self.pairs], dtype=float)

    def __len__(self) -> int:
        return len(self.pairs)

    def describe(self) -> dict[str, Any]:
        return {"pairs": len(self), "problems": sorted({p.problem_id for p in self.pairs}),
                "folds": self.folds, "reference": self.reference}


def _speedups(measurements: Sequence[Measurement]) -> dict[str, float]:
    """candidate id -> measured speedup, NaN for a failed measurement."""
    return {m.candidate_id: (float(m.speedup) if m.ok and m.speedup else math.nan) for m in measurements}


def sample_pairs(landscape: Landscape, measurements: Sequence[Measurement], parents: int, children: int,
                 seed: int = 0, reference: str = "parent") -> list[PairSample]:
    """Up to `parents` correct points of one landscape and up to `children` measured
    neighbours of each, with each pair's reference speedup (see the module doc), in a
    deterministic order. The parents and children drawn do not depend on `reference`."""
    if parents < 1 or children < 1:
        raise ConfigError(f"parents and children per parent must be >= 1, got {parents} and {children}")
    if reference not in REFERENCES:
        raise ConfigError(f"reference is one of {', '.join(REFERENCES)}, got {reference!r}")
    speed = _speedups(measurements)
    rng = random.Random(f"trust-pairs:{landscape.problem_id}:{seed}")
    good = [cid for cid in landscape.point_ids if math.isfinite(speed.get(cid, math.nan))]
    state_rng = random.Random(f"trust-state:{landscape.problem_id}:{seed}")  # apart: same pairs either way
    out: list[PairSample] = []
    for pid in rng.sample(good, min(parents, len(good))):
        nb = list(dict.fromkeys(cid for cid, _ in landscape.neighbourhood(pid) if cid in speed))
        ref = speed[pid]
        if reference == "best":
            others = [cid for cid in good if cid != pid]
            k = min(state_rng.randint(*BEST_STATE_POINTS), len(others))
            ref = max([ref] + [speed[cid] for cid in state_rng.sample(others, k)])
        for cid in rng.sample(nb, min(children, len(nb))):
            out.append(PairSample(landscape.problem_id, pid, cid, speed[pid], speed[cid], ref))
    return out


def problem_folds(problem_ids: Sequence[str], folds: int, seed: int = 0) -> list[list[str]]:
    """`problem_ids` shuffled by `seed` and dealt into `folds` groups (sorted inside)."""
    ids = sorted(set(problem_ids))
    if folds < 2 or len(ids) < folds:
        raise ConfigError(f"{len(ids)} training problems for {folds} folds; need folds >= 2 and a problem per fold")
    random.Random(f"trust-folds:{seed}").shuffle(ids)
    return [sorted(ids[i::folds]) for i in range(folds)]


def calibration_pairs(landscapes: Mapping[str, Landscape], records, make_forecaster: Callable[[Any], Any],
                      hardware, protocol: Protocol, parents: int = 32, children: int = 16, folds: int = 3,
                      seed: int = 0, reference: str = "parent",
                      groups: Sequence[Sequence[str]] | None = None) -> CalibrationPairs:
    """Out-of-fold forecast calibration pairs over the training problems that have a landscape.

    `records` (problems, candidates, measurements of `hardware.key`; held-out rows are dropped
    here) supply the measured speedups and each fold's fit; `make_forecaster(records)` returns a
    forecaster fitted on `records` (or one with nothing to fit). Forecasts are taken relative
    to the reference, as a search takes them. Abstentions are left out (the rule never trusts
    one); with no pair left the result is empty (nothing can be certified). `groups` gives the
    problem folds instead of `problem_folds(.., folds, seed)` (each training problem in one;
    a script that fits per fold for other uses too passes its own, so the fits are shared)."""
    train_ids = sorted(pid for pid in landscapes if not protocol.is_heldout(pid))  # held-out ones left alone
    rs = protocol.training_only(records)
    ms = [m for m in rs.measurements if m.hardware_key == hardware.key]
    by_problem: dict[str, list[Measurement]] = {}
    for m in ms:
        by_problem.setdefault(m.problem_id, []).append(m)
    train_ids = [pid for pid in train_ids if by_problem.get(pid)]
    if groups is None:
        groups = problem_folds(train_ids, folds, seed)
    else:
        groups = [sorted(set(g) & set(train_ids)) for g in groups]
        if sorted(x for g in groups for x in g) != sorted(train_ids):
            raise ConfigError("calibration groups must hold each training problem with a landscape exactly once")
    problems = {p.id: p for p in rs.problems}
    cands = {c.id: c for land in landscapes.values() for c in land.candidates}
    probs, samples = [], []
    for group in groups:
        inside = set(group)
        fit_on = RecordSet([p for p in rs.problems if p.id not in inside],
                           [c for c in rs.candidates if c.problem_id not in inside],
                           [m for m in ms if m.problem_id not in inside])
        fc = make_forecaster(fit_on)
        for pid in group:
            if pid not in problems:
                raise ConfigError(f"no problem record for {pid} among the training records")
            pairs = sample_pairs(landscapes[pid], by_problem[pid], parents, children, seed, reference)
            if not pairs:
                continue
            # the problem's measured reference times, as a search knows them once it has measured
            # there (a new forecaster; the fitted one is unchanged)
            fs = fc.with_reference_times(by_problem[pid]).forecast_batch([(problems[pid], cands[p.child_id]) for p in pairs], hardware,
                                   relative_to="reference")
            for p, f in zip(pairs, fs):
                if f.abstained:
                    continue
                probs.append(np.asarray(f.probabilities, dtype=float))
                samples.append(p)
    if not samples:  # no measured neighbour anywhere, or the forecaster abstained on every child
        return CalibrationPairs(np.zeros((0, 8)), np.zeros(0), np.zeros(0), [], groups, reference)
    return CalibrationPairs(np.vstack(probs), np.asarray([p.parent_speedup for p in samples]),
                            np.asarray([p.child_speedup for p in samples]), samples, groups, reference)


def risk_by_share(confidence, losses, shares: Sequence[float]) -> dict[str, float | None]:
    """The loss rate among the pairs a rule would trust if it trusted the top `share` of them by
    `confidence` (highest first; equal confidences keep their input order), for each share in
    (0, 1]: keys "top<share>". A share too small to hold one pair gives None. This is the
    empirical risk-coverage curve, with no certificate: what a threshold at that coverage would
    have cost on these pairs."""
    c = np.asarray(confidence, dtype=float)
    loss = np.asarray(losses, dtype=float)
    if c.shape != loss.shape or c.ndim != 1:
        raise ConfigError(f"confidence and losses need one value per pair, got shapes {c.shape} and {loss.shape}")
    order = np.argsort(-c, kind="stable")
    out: dict[str, float | None] = {}
    for share in shares:
        if not 0.0 < share <= 1.0:
            raise ConfigError(f"a share is in (0, 1], got {share}")
        n = int(math.floor(share * len(c) + 1e-9))
        out[f"top{share:g}"] = float(loss[order[:n]].mean()) if n else None
    return out


def rank_auc(confidence, losses) -> float | None:
    """P(a pair with loss 0 has higher confidence than a pair with loss 1), ties counted half
    (the Mann-Whitney AUC): 0.5 for a confidence unrelated to the loss. None when either class
    is empty."""
    c = np.asarray(confidence, dtype=float)
    loss = np.asarray(losses, dtype=float) > 0
    good, bad = c[~loss], c[loss]
    if not len(good) or not len(bad):
        return None
    ranks = rankdata(np.concatenate([good, bad]))
    return float((ranks[:len(good)].sum() - len(good) * (len(good) + 1) / 2) / (len(good) * len(bad)))



def search_state_pairs(events, speedups: Mapping[str, float], problem_id: str, seed: int = 0
                       ) -> list[tuple[np.ndarray, PairSample]]:
    """Calibration pairs from a replayed search's own states: for every child a method planned
    (each `forecast` event of an expansion step, step 0's seeds left out), the forecast the
    method saw, with the search's state when it planned: the parent's measured speedup and the
    best measured speedup of the search so far (`PairSample.reference_speedup`: the "best"
    reference). The child's speedup is its recorded one from the landscape, `speedups` (NaN or
    absent: failed), whether or not the search measured it. A child planned twice (a generator
    that revisits) gives two pairs, one per state. Pairs whose search had no correct measurement
    yet, or whose parent was not measured correct, are left out (no reference to judge against).

    `events` are the search's typed events (`workbench.search.events.decode_all`), in order;
    in a stepped search (in_flight = 1, not pipelined) every forecast of a step precedes that
    step's measurements, so the running best when a forecast is read is what the method saw."""
    from workbench.search import events as ev

    out: list[tuple[np.ndarray, PairSample]] = []
    best, measured, parent = -math.inf, {}, None
    for e in events:
        if isinstance(e, ev.Selected):
            parent = e.parent_id if not e.deferred else None
        elif isinstance(e, ev.Measured):
            m = e.measurement
            if m.ok and m.speedup:
                measured[m.candidate_id] = float(m.speedup)
                best = max(best, float(m.speedup))
        elif isinstance(e, ev.Forecasted) and parent is not None and e.step and not e.forecast.abstained:
            p_speed = measured.get(parent)
            if p_speed is None or not math.isfinite(best):
                continue
            cid = e.forecast.candidate_id
            child = speedups.get(cid, math.nan)
            child = float(child) if child is not None and math.isfinite(child) and child > 0 else math.nan
            out.append((np.asarray(e.forecast.probabilities, dtype=float),
                        PairSample(problem_id, parent, cid, p_speed, child, best)))
    return out


def pairs_from_states(states: Sequence[tuple[np.ndarray, PairSample]], reference: str,
                      folds: list[list[str]] | None = None) -> CalibrationPairs:
    """`CalibrationPairs` of search-state pairs, each judged against `reference` ("best": the
    search's best when it planned, "parent": the parent's speedup)."""
    if reference not in REFERENCES:
        raise ConfigError(f"reference is one of {', '.join(REFERENCES)}, got {reference!r}")
    samples = [s if reference == "best" else PairSample(s.problem_id, s.parent_id, s.child_id, s.parent_speedup,
                                                        s.child_speedup) for _, s in states]
    if not samples:
        return CalibrationPairs(np.zeros((0, 8)), np.zeros(0), np.zeros(0), [], folds or [], reference)
    return CalibrationPairs(np.vstack([p for p, _ in states]), np.asarray([s.parent_speedup for s in samples]),
                            np.asarray([s.child_speedup for s in samples]), samples, folds or [], reference)
