"""Search methods: how many children to generate per parent and which of them to measure.

Every method has the same interface and the same budget accounting: the run loop measures the
`measure` list of a Plan in order and stops at the GPU budget, so a method can never spend more
than the budget. `trust` lists candidates whose forecast stands in for a measurement (archived
as *trusted*, never as measured); everything else is dropped after forecasting.

- measure_all        k children, all measured (the baseline).
- screen_topk        m*k children, forecast, the top k by expected log2 speedup measured.
- selective          m*k children, forecast; a selective policy (trust | defer) lets confident
                     forecasts stand in for measurements; deferred ones are ranked and the top k
                     measured.
- uncertainty_aware  m*k children, forecast; a child is trusted (not measured) when the
                     selective policy trusts its forecast and its expected improvement over the
                     parent is below `min_gain` (trust_rule="policy", the default), or, with
                     trust_rule="no_gain", when its forecast is a *certified no-gain*: the
                     probability it puts on "no faster than the parent by `min_gain`"
                     reaches a threshold that a conformal risk
                     controller certifies, on held-out forecasts, to keep the rate of skipped
                     children that would in fact have gained <= `no_gain_risk` (with
                     probability 1 - delta). The rest (unsure or promising) are ranked by
                     expected log2 speedup (or by expected improvement over the parent,
                     EI = (1 - p_fail) * sum_b p_b * max(mid_b - S_parent, 0) / S_parent) and
                     the top k measured, so no budget goes to a child certified not to gain
                     and a parent with nothing worth measuring costs one measurement.

The selective policies (and uncertainty_aware's no-gain certificate) are calibrated on the
forecaster's held-out forecasts (its `calibration_set()`, when it has one) together with the
search's own measured forecasts.
"""
from __future__ import annotations

import abc
import bisect
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence

import numpy as np

from workbench import bins
from workbench.errors import ConfigError
from workbench.records import Candidate, Forecast, Measurement


class SelectivePolicy(Protocol):
    """What `workbench.calibration.selective` policies offer (ThresholdPolicy, ConformalRiskController)."""

    def calibrate(self, forecasts: Sequence[Forecast], measurements: Sequence[Measurement]) -> Any: ...

    def decide(self, forecast: Forecast) -> str: ...  # "trust" | "defer"


@dataclass
class Plan:
    """What to do with a parent's children. Ids only; `scores` is the ranking score used."""

    measure: list[str] = field(default_factory=list)
    trust: list[str] = field(default_factory=list)
    drop: list[str] = field(default_factory=list)
    scores: dict[str, float] = field(default_factory=dict)


@dataclass
class MethodContext:
    """The state a method may use. `history` = (forecast, measurement) pairs of this search's
    correct measured candidates, in measurement order (what a policy calibrates on)."""

    parent_speedup: float | None
    budget_left: int
    history: list[tuple[Forecast, Measurement]] = field(default_factory=list)
    #: The best measured speedup of the search so far (None before any correct measurement).
    best_speedup: float | None = None
    #: Held-out forecasts of the forecaster, ((n, 8) probabilities, (n,) true bins), e.g. the
    #: learned forecaster's out-of-fold `calibration_set()`; None when it has none.
    calibration: tuple[Any, Any] | None = None


class Method(abc.ABC):
    name: str
    #: True when the method cannot run without a forecaster.
    needs_forecaster: bool = True

    def __init__(self, k: int = 4, m: int = 4):
        if k < 1 or m < 1:
            raise ConfigError(f"k and m must be >= 1, got k={k}, m={m}")
        self.k = k
        self.m = m

    @property
    def n_children(self) -> int:
        """Children to generate per parent."""
        return self.k * self.m

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "k": self.k, "m": self.m}

    @abc.abstractmethod
    def plan(self, children: Sequence[Candidate], forecasts: dict[str, Forecast], ctx: MethodContext) -> Plan:
        """Decide measure / trust / drop for `children` (forecasts keyed by candidate id)."""


def _expected(f: Forecast | None) -> float:
    """Ranking score: expected log2 speedup; an abstention or a missing forecast ranks as 0 (1x)."""
    if f is None or f.abstained:
        return 0.0
    return f.expected_log2_speedup


class MeasureAll(Method):
    name = "measure_all"
    needs_forecaster = False

    def __init__(self, k: int = 4):
        super().__init__(k, 1)

    def plan(self, children, forecasts, ctx) -> Plan:
        return Plan(measure=[c.id for c in children])


class ScreenTopK(Method):
    name = "screen_topk"

    def plan(self, children, forecasts, ctx) -> Plan:
        scores = {c.id: _expected(forecasts.get(c.id)) for c in children}
        ranked = sorted(children, key=lambda c: -scores[c.id])  # stable: ties keep generation order
        return Plan(measure=[c.id for c in ranked[: self.k]], drop=[c.id for c in ranked[self.k:]],
                    scores=scores)


def default_policy_factory() -> SelectivePolicy:
    """A ConformalRiskController from `workbench.calibration.conformal` with its defaults."""
    try:
        from workbench.calibration.conformal import ConformalRiskController
    except ImportError as e:  # pragma: no cover - depends on the calibration package being present
        raise ConfigError("the selective and uncertainty_aware methods need workbench.calibration.conformal "
                          f"(ConformalRiskController), which cannot be imported ({e}); pass policy=... "
                          "or use screen_topk") from e
    return ConformalRiskController()


class _PolicyMethod(Method):
    """Shared policy handling. With a calibration set from the forecaster (`ctx.calibration`:
    held-out forecasts, e.g. the learned forecaster's out-of-fold ones) the policy is calibrated
    on it together with the search's own history from the first step, and recalibrated as the
    history grows; without one, on the history alone once it holds `min_calibration` pairs.
    Until then (or when calibration fails) every forecast is deferred."""

    def __init__(self, k: int = 4, m: int = 4, policy: SelectivePolicy | None = None,
                 policy_factory: Callable[[], SelectivePolicy] | None = None,
                 min_calibration: int = 16, recalibrate: bool = True, min_measure: int = 1):
        super().__init__(k, m)
        self._fixed = policy
        self._factory = policy_factory or default_policy_factory
        self.min_calibration = min_calibration
        self.recalibrate = recalibrate and policy is None
        self.min_measure = min_measure
        self._calibrated_on = -1
        self._policy: SelectivePolicy | None = policy

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "min_calibration": self.min_calibration,
                "policy": type(self._fixed).__name__ if self._fixed is not None else "conformal(default)",
                "min_measure": self.min_measure}

    def policy(self, history: Sequence[tuple[Forecast, Measurement]],
               calibration: tuple[Any, Any] | None = None) -> SelectivePolicy | None:
        """The policy to use now, or None while it is not calibrated (then defer everything)."""
        if self._fixed is not None:
            return self._fixed
        prior = calibration if calibration is not None and len(calibration[0]) else None
        if prior is None and len(history) < self.min_calibration:
            return None
        grown = len(history) != self._calibrated_on
        if self._calibrated_on == -1 or (grown and (self.recalibrate or self._policy is None)):
            pol = self._factory()
            fs, ms = [f for f, _ in history], [m for _, m in history]
            try:
                with_prior = getattr(pol, "calibrate_with", None)
                if prior is not None and with_prior is not None:
                    with_prior(prior, fs, ms)
                elif len(history) >= self.min_calibration:
                    pol.calibrate(fs, ms)
                else:
                    raise ConfigError("the policy cannot use a calibration set")
            except Exception:  # noqa: BLE001 - e.g. too little data for the guarantee: defer all
                pol = None
            self._policy, self._calibrated_on = pol, len(history)
        return self._policy

    @staticmethod
    def decide(policy: SelectivePolicy | None, f: Forecast | None) -> str:
        if policy is None or f is None or f.abstained:
            return "defer"
        return "trust" if policy.decide(f) == "trust" else "defer"


class Selective(_PolicyMethod):
    """Confident forecasts stand in for measurements; unsure ones go to the GPU (top k of them).
    At least `min_measure` child is measured per parent (the best-ranked) so the archive stays
    grounded in measurements and the budget is always spent."""

    name = "selective"

    def plan(self, children, forecasts, ctx) -> Plan:
        pol = self.policy(ctx.history, ctx.calibration)
        scores = {c.id: _expected(forecasts.get(c.id)) for c in children}
        ranked = sorted(children, key=lambda c: -scores[c.id])
        defer = [c.id for c in ranked if self.decide(pol, forecasts.get(c.id)) == "defer"]
        trust = [c.id for c in ranked if c.id not in set(defer)]
        measure = defer[: self.k]
        if len(measure) < self.min_measure:
            extra = [cid for cid in trust if cid not in measure][: self.min_measure - len(measure)]
            measure += extra
            trust = [cid for cid in trust if cid not in extra]
        drop = [cid for cid in defer if cid not in measure]
        return Plan(measure=measure, trust=trust, drop=drop, scores=scores)


#: What uncertainty_aware's expected improvement is measured against: the parent being expanded, or
#: the best kernel the search has measured so far.
IMPROVE_OVER = ("parent", "best")
#: How uncertainty_aware orders the children it may measure: by expected improvement, or by
#: expected log2 speedup (expected improvement then only decides which are worth measuring).
RANKS = ("ei", "expected")


def expected_improvement(f: Forecast, parent_speedup: float) -> float:
    """E[max(S - S_parent, 0)] / S_parent under the forecast (bin midpoints), times 1 - p_fail.

    Unit: fraction of the parent's speedup (0.1 = an expected 10% gain).
    """
    if parent_speedup <= 0:
        raise ValueError("parent_speedup must be positive")
    gain = sum(p * max(mid - parent_speedup, 0.0) for p, mid in zip(f.probabilities, bins.MIDPOINTS))
    p_fail = f.p_fail if f.p_fail is not None else 0.0
    return (1.0 - min(max(p_fail, 0.0), 1.0)) * gain / parent_speedup


#: How uncertainty_aware decides that a child need not be measured: a conformal certificate of
#: no gain over the parent ("no_gain"), or the selective policy's bin-confidence trust together
#: with an expected improvement below `min_gain` ("policy", the default).
TRUST_RULES = ("no_gain", "policy")


def no_gain_level(ref_speedup: float, min_gain: float) -> int | None:
    """Index j of the highest bin edge at or below ref_speedup * (1 + min_gain), or None when
    that is below the lowest edge. "S <= EDGES[j]" (bins 0..j) then implies "no gain": the
    bins are coarse, so the certified event is rounded down to an edge (conservative)."""
    j = bisect.bisect_right(bins.EDGES, ref_speedup * (1.0 + min_gain)) - 1
    return j if j >= 0 else None


def no_gain_confidence(probabilities, level: int) -> np.ndarray:
    """P(S <= EDGES[level]) = the mass of bins 0..level, row-wise for (n, 8) or (8,) input."""
    p = np.asarray(probabilities, dtype=float)
    return p[..., : level + 1].sum(axis=-1)


def no_gain_losses(true_bins, level: int) -> np.ndarray:
    """1 where the candidate was in fact faster than EDGES[level] (trusting it lost a gain)."""
    return (np.asarray(true_bins, dtype=int) > level).astype(float)


class UncertaintyAware(_PolicyMethod):
    """Measure the unsure and the promising; trust certified no-gain forecasts.

    With `trust_rule="no_gain"` a child is *trusted* (not measured; archived as
    trusted) when its forecast's probability of no gain over the parent,
    P(S <= EDGES[j]) with EDGES[j] the highest bin edge at or below S_parent * (1 + min_gain)
    (`improve_over="best"`: the best speedup measured so far), reaches the threshold that a
    `ConformalRiskController(target_risk=no_gain_risk, delta=delta)` picks for level j, on the
    forecaster's held-out forecasts and the search's own measured ones, with loss = the
    candidate was in fact faster than EDGES[j]. So among trusted children the share that would
    have gained is <= `no_gain_risk` with probability >= 1 - delta (exchangeability assumed).
    Without calibration data, or when no threshold can be certified, nothing is trusted.
    `trust_rule="policy"` (the default) trusts a child when the selective policy trusts its
    forecast (bin confidence) AND its expected improvement (EI) is below `min_gain`. Why the
    default is "policy": the search ablation (benchmarks/search_ablation.py, docs/search.md).

    Every other child may be measured: the top k, ordered by expected log2 speedup
    (`rank="expected"`, the default) or by EI (`rank="ei"`); an abstention is ranked first.
    With `backfill=False` only the untrusted among the top k of all children are measured (a
    trusted child's measurement is saved rather than given to a lower-ranked child). So the
    budget a step leaves unspent on trusted children goes to the next parent. At least
    `min_measure` per parent. When nothing is trusted the method measures the top k as
    `screen_topk` does.
    """

    name = "uncertainty_aware"

    def __init__(self, k: int = 4, m: int = 4, min_gain: float = 0.02, improve_over: str = "parent",
                 rank: str = "expected", trust_rule: str = "policy", no_gain_risk: float = 0.1,
                 delta: float = 0.1, backfill: bool = True, **kw: Any):
        super().__init__(k, m, **kw)
        if improve_over not in IMPROVE_OVER:
            raise ConfigError(f"improve_over is one of {', '.join(IMPROVE_OVER)}, got {improve_over!r}")
        if rank not in RANKS:
            raise ConfigError(f"rank is one of {', '.join(RANKS)}, got {rank!r}")
        if trust_rule not in TRUST_RULES:
            raise ConfigError(f"trust_rule is one of {', '.join(TRUST_RULES)}, got {trust_rule!r}")
        if not 0 < no_gain_risk < 1 or not 0 < delta < 1:
            raise ConfigError(f"no_gain_risk and delta are in (0, 1), got {no_gain_risk} and {delta}")
        if min_gain < 0:
            raise ConfigError(f"min_gain must be >= 0, got {min_gain}")
        self.min_gain = min_gain
        self.improve_over = improve_over
        self.rank = rank
        self.trust_rule = trust_rule
        self.no_gain_risk = no_gain_risk
        self.delta = delta
        self.backfill = bool(backfill)
        self._no_gain: dict[int, tuple[int, float | None]] = {}  # level -> (history length, threshold)

    def describe(self) -> dict[str, Any]:
        d = {**super().describe(), "min_gain": self.min_gain, "improve_over": self.improve_over,
             "rank": self.rank, "trust_rule": self.trust_rule, "backfill": self.backfill}
        if self.trust_rule == "no_gain":
            d.update(policy=f"conformal no-gain (risk {self.no_gain_risk:g}, delta {self.delta:g})")
        return d

    def no_gain_threshold(self, level: int, history: Sequence[tuple[Forecast, Measurement]],
                          calibration: tuple[Any, Any] | None) -> float | None:
        """The certified confidence threshold for level j (None: nothing can be certified)."""
        cached = self._no_gain.get(level)
        if cached is not None and cached[0] == len(history):
            return cached[1]
        conf, loss = [], []
        if calibration is not None and len(calibration[0]):
            conf.append(no_gain_confidence(calibration[0], level))
            loss.append(no_gain_losses(calibration[1], level))
        labelled = [(f, m) for f, m in history if not f.abstained and m.bin is not None]
        if labelled and (conf or len(labelled) >= self.min_calibration):
            conf.append(no_gain_confidence([f.probabilities for f, _ in labelled], level))
            loss.append(no_gain_losses([m.bin for _, m in labelled], level))
        threshold = None
        if conf:
            from workbench.calibration.conformal import ConformalRiskController

            ctl = ConformalRiskController(target_risk=self.no_gain_risk, delta=self.delta)
            t = ctl.calibrate_arrays(np.concatenate(conf), np.concatenate(loss)).threshold_
            threshold = float(t) if np.isfinite(t) and t <= 1.0 else None
        self._no_gain[level] = (len(history), threshold)
        return threshold

    def _trusted(self, children, forecasts, ctx, ref: float, ei: dict[str, float]) -> set[str]:
        """Ids of the children that need no measurement (`ei`: each child's expected improvement
        over `ref`, inf without a forecast)."""
        if self.trust_rule == "policy":
            pol = self.policy(ctx.history, ctx.calibration)
            return {c.id for c in children if ei[c.id] < self.min_gain
                    and self.decide(pol, forecasts.get(c.id)) == "trust"}
        level = no_gain_level(ref, self.min_gain)
        if level is None:
            return set()
        threshold = self.no_gain_threshold(level, ctx.history, ctx.calibration)
        if threshold is None:
            return set()
        return {c.id for c in children if (f := forecasts.get(c.id)) is not None and not f.abstained
                and no_gain_confidence(f.probabilities, level) >= threshold}

    def plan(self, children, forecasts, ctx) -> Plan:
        ref = ctx.best_speedup if self.improve_over == "best" else ctx.parent_speedup
        s_parent = ref if ref and ref > 0 else 1.0
        scores = {}
        for c in children:
            f = forecasts.get(c.id)
            scores[c.id] = expected_improvement(f, s_parent) if f is not None else float("inf")
        if self.rank == "expected":  # abstentions (EI inf) first, then by expected log2 speedup
            ranked = sorted(children, key=lambda c: (scores[c.id] != float("inf"),
                                                     -_expected(forecasts.get(c.id))))
        else:
            ranked = sorted(children, key=lambda c: -scores[c.id])
        trusted = self._trusted(children, forecasts, ctx, s_parent, scores)
        return _plan_around_trust(ranked, trusted, scores, self.k, self.backfill, self.min_measure)


def _plan_around_trust(ranked: list, trusted: set[str], scores: dict[str, float], k: int,
                       backfill: bool, min_measure: int) -> Plan:
    """The plan of a method that trusts some children: `ranked` children (best first) minus the
    `trusted` ids are worth measuring; with `backfill` the top k of those are measured, else only
    those among the top k of all (a trusted child's measurement is saved, not moved down). At
    least `min_measure` are measured, topped up from the trusted in rank order; the rest of the
    untrusted are dropped."""
    trust = [c.id for c in ranked if c.id in trusted]
    worth = [c.id for c in ranked if c.id not in trusted]  # unsure or promising
    if backfill:
        measure = worth[:k]
    else:
        top = {c.id for c in ranked[:k]}
        measure = [cid for cid in worth if cid in top]
    if len(measure) < min_measure:
        extra = trust[: min_measure - len(measure)]
        measure += extra
        trust = [cid for cid in trust if cid not in extra]
    drop = [cid for cid in worth if cid not in measure]
    return Plan(measure=measure, trust=trust, drop=drop, scores=scores)


def beat_confidence(probabilities, ref_speedup, margin: float = 0.0) -> np.ndarray:
    """P(S <= ref_speedup * (1 + margin)) under bin forecasts: the forecast's confidence that the
    candidate does NOT beat `ref_speedup` by more than `margin`.

    The CDF is the bins' masses, spread uniformly in log2 speedup inside each bin (the open outer
    bins taken as one octave wide, as `workbench.bins.MIDPOINTS` does), so the confidence moves
    with `ref_speedup` inside a bin instead of jumping at the edges. Row-wise for (n, 8)
    probabilities with (n,) or scalar references; speedups are positive."""
    p = np.atleast_2d(np.asarray(probabilities, dtype=float))
    x = np.broadcast_to(np.asarray(ref_speedup, dtype=float) * (1.0 + margin), (len(p),))
    if np.any(~(x > 0)):
        raise ValueError("reference speedups must be positive")
    lo = np.log2(np.asarray((bins.EDGES[0] / 2,) + bins.EDGES))
    hi = np.log2(np.asarray(bins.EDGES + (bins.EDGES[-1] * 2,)))
    share = np.clip((np.log2(x)[:, None] - lo[None, :]) / (hi - lo)[None, :], 0.0, 1.0)  # (n, 8)
    out = (p * share).sum(axis=1)
    return out if np.ndim(probabilities) > 1 else out[:1].reshape(())


def beat_losses(true_speedups, ref_speedups, margin: float = 0.0) -> np.ndarray:
    """1 where a candidate in fact beat its reference (S > ref * (1 + margin)); a failed candidate
    (speedup NaN or None) never beats anything (0)."""
    t = np.asarray([np.nan if v is None else v for v in np.ravel(true_speedups)], dtype=float)
    r = np.asarray(ref_speedups, dtype=float) * (1.0 + margin)
    return np.where(np.isfinite(t), t > r, False).astype(float)


@dataclass(frozen=True)
class SkipCertificate:
    """A certified skip threshold: trusting a child (not measuring it) when
    `beat_confidence(forecast, reference speedup, margin) >= threshold` keeps the rate of trusted
    children that would in fact have beaten the reference <= `target_risk`, with probability
    >= 1 - `delta` over the calibration draw, for children exchangeable with the calibration
    pairs (same forecaster, GPU and kind of problems). `reference` says what a child is judged
    against: "parent" (its parent's speedup) or "best" (the best speedup of the search so far);
    the pairs it was certified on must have been drawn with the same. `threshold` is +inf when
    nothing could be certified. `coverage` and `risk` are the trusted share and the beat rate on
    the calibration pairs at the threshold; `n_calibration` their number."""

    threshold: float
    target_risk: float
    delta: float
    margin: float
    n_calibration: int
    coverage: float
    risk: float
    reference: str = "parent"

    def __post_init__(self):
        if self.reference not in ("parent", "best"):
            raise ConfigError(f"a skip certificate's reference is parent or best, got {self.reference!r}")

    def to_dict(self) -> dict[str, Any]:
        return {"threshold": self.threshold if np.isfinite(self.threshold) else None,
                "target_risk": self.target_risk, "delta": self.delta, "margin": self.margin,
                "n_calibration": self.n_calibration, "coverage": self.coverage, "risk": self.risk,
                "reference": self.reference}


def certify_skip(probabilities, ref_speedups, true_speedups, target_risk: float = 0.1, delta: float = 0.1,
                 margin: float = 0.0, reference: str = "parent", **controller_kw: Any) -> SkipCertificate:
    """Certify a skip threshold on calibration pairs: (n, 8) forecasts of children, their (n,)
    reference speedups (the parents', or a search state's best: `reference` names which) and the
    children's (n,) measured speedups (NaN/None: failed), with
    `workbench.calibration.conformal.ConformalRiskController` (loss: the child beat its
    reference). The pairs must come from problems the searched ones are exchangeable with and
    that the forecaster was not fitted on (out-of-fold forecasts)."""
    from workbench.calibration.conformal import ConformalRiskController

    p = np.asarray(probabilities, dtype=float)
    ref = np.asarray(ref_speedups, dtype=float)
    if p.ndim != 2 or p.shape[1] != bins.N_BINS or len(p) != len(ref) or len(p) != len(np.ravel(true_speedups)):
        raise ConfigError(f"certify_skip needs (n, {bins.N_BINS}) forecasts and n parent and child speedups")
    if len(p) == 0:
        raise ConfigError("certify_skip needs at least one calibration pair")
    ctl = ConformalRiskController(target_risk=target_risk, delta=delta, **controller_kw)
    ctl.calibrate_arrays(beat_confidence(p, ref, margin), beat_losses(true_speedups, ref, margin))
    t = float(ctl.threshold_)
    return SkipCertificate(t if t <= 1.0 else float("inf"), target_risk, delta, margin, len(p),
                           float(ctl.coverage_), float(ctl.risk_), reference)


class CertifiedSkip(Method):
    """Skip the children certified not to beat their reference; measure the top k of the rest.

    A child is *trusted* (archived as trusted, never measured by this method) when its forecast
    is not an abstention and `beat_confidence(forecast, reference, certificate.margin)` reaches
    `certificate.threshold`, the reference being the parent's speedup, or the best speedup of the
    search so far when `certificate.reference` is "best" (a `SkipCertificate` from
    `certify_skip` on pairs the
    searched problem is exchangeable with; the method does no calibration of its own, so what
    it is calibrated on is decided by whoever builds the certificate). The other children are
    ranked by expected log2 speedup (generation order on ties) and the top k measured, or, with
    `backfill=False`, only the untrusted among the top k of all children (a trusted child's
    measurement is then left to the next parent). When fewer than `min_measure` are left to
    measure, the best-ranked trusted children are measured instead (moved out of the trusted
    list). Without a certificate, or with one whose threshold is +inf, nothing is trusted and
    the method measures as screen_topk does."""

    name = "certified_skip"

    def __init__(self, k: int = 4, m: int = 4, certificate: SkipCertificate | None = None,
                 backfill: bool = True, min_measure: int = 0):
        super().__init__(k, m)
        if min_measure < 0 or min_measure > k:
            raise ConfigError(f"min_measure is between 0 and k={k}, got {min_measure}")
        self.certificate = certificate
        self.backfill = bool(backfill)
        self.min_measure = int(min_measure)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "backfill": self.backfill, "min_measure": self.min_measure,
                "certificate": self.certificate.to_dict() if self.certificate is not None else None}

    def trusted(self, children, forecasts, reference_speedup: float | None) -> set[str]:
        """Ids of the children certified not to beat `reference_speedup`."""
        cert = self.certificate
        if cert is None or not np.isfinite(cert.threshold) or not reference_speedup or reference_speedup <= 0:
            return set()
        usable = [c for c in children if (f := forecasts.get(c.id)) is not None and not f.abstained]
        if not usable:
            return set()
        conf = beat_confidence([forecasts[c.id].probabilities for c in usable], reference_speedup, cert.margin)
        return {c.id for c, v in zip(usable, conf) if v >= cert.threshold}

    def plan(self, children, forecasts, ctx) -> Plan:
        scores = {c.id: _expected(forecasts.get(c.id)) for c in children}
        ranked = sorted(children, key=lambda c: -scores[c.id])  # stable: ties keep generation order
        best = self.certificate is not None and self.certificate.reference == "best"
        skip = self.trusted(children, forecasts, ctx.best_speedup if best else ctx.parent_speedup)
        return _plan_around_trust(ranked, skip, scores, self.k, self.backfill, self.min_measure)


METHODS = ("measure_all", "screen_topk", "selective", "uncertainty_aware")
#: Methods that need an object built outside the search (certified_skip: a SkipCertificate), so
#: the CLI and the app do not offer them; benchmarks and scripts build them with make_method.
CERTIFIED_METHODS = ("certified_skip",)


def make_method(name: str, k: int = 4, m: int = 4, **kw: Any) -> Method:
    """A method by name with k measured (and m*k generated) children per parent."""
    if name == "measure_all":
        return MeasureAll(k)
    if name == "screen_topk":
        return ScreenTopK(k, m)
    if name == "selective":
        return Selective(k, m, **kw)
    if name == "uncertainty_aware":
        return UncertaintyAware(k, m, **kw)
    if name == "certified_skip":
        return CertifiedSkip(k, m, **kw)
    raise ConfigError(f"unknown method {name!r}; choose from {', '.join(METHODS + CERTIFIED_METHODS)}")
