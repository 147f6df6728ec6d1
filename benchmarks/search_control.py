"""The search benchmark's random-score control and each surrogate method's difference to it.

A surrogate method (one that ranks or trusts children by their forecasts: screen_topk, selective,
uncertainty_aware) runs a second time under the name `<method>[random]` with `RandomScoreForecaster`
in place of its forecaster, and nothing else changed: the same budget, seeds, k, m, method
settings and candidate pools. The search's generator and parent selection draw from the search
seed and step alone, so the method and its control expand the same parent into the same children
whenever their archives agree; the two runs differ only in the scores the children are ranked by.

"Reaches the target": a run reaches measure_all's median final best `target` on its problem
after `n` GPU measurements when its best-so-far after n measurements is >= target * (1 - tie_rel)
(`tie_floor`); tie_rel = 0 compares exactly, tie_rel > 0 counts a best within that relative
distance below the target as reaching it (ties within the timing noise). A run's budget fraction
to match is n / budget at the first such n; a run that never reaches it within its budget is
censored at (budget + 1) / budget ("at least one measurement more than the budget").

`vs_random_diff` = mean over (problem, seed) pairs of (control's fraction - method's fraction):
positive when the forecaster needs less budget than random scores. `vs_random_diff_ci` is a
percentile bootstrap interval of that mean, resampling (problem, seed) pairs with replacement
(both runs of a pair together), with a fixed bootstrap seed so the file reproduces.
"""
from __future__ import annotations

import hashlib
from typing import Any, Sequence

import numpy as np

from workbench import bins
from workbench.errors import ConfigError
from workbench.forecast.base import BatchForecaster
from workbench.records import Forecast

#: The control's name inside method names: "screen_topk[random]".
CONTROL = "random"
#: The methods whose choices depend on forecasts, each of which gets a random-score control.
SURROGATE_METHODS = ("screen_topk", "selective", "uncertainty_aware")
#: Bootstrap resamples, interval level and bootstrap seed of vs_random_diff_ci.
N_BOOT, CI_LEVEL, BOOT_SEED = 10_000, 0.95, 0
#: Salt of the random scores, so they are not the same stream as anything else seeded by the search seed.
_SALT = 0x5EA4C7


def control_name(method: str) -> str:
    """`screen_topk` -> `screen_topk[random]`."""
    return f"{method}[{CONTROL}]"


def split_control(name: str) -> tuple[str, str | None]:
    """`screen_topk[random]` -> ("screen_topk", "random"); `screen_topk` -> ("screen_topk", None).
    Raises ConfigError for another bracketed control, or a control of a method without forecasts."""
    if not name.endswith("]") or "[" not in name:
        return name, None
    base, control = name[:-1].split("[", 1)
    if control != CONTROL:
        raise ConfigError(f"unknown control {control!r} in method {name!r}; the control is [{CONTROL}]")
    if base not in SURROGATE_METHODS:
        raise ConfigError(f"{name!r}: only methods that use forecasts have a random control "
                          f"({', '.join(SURROGATE_METHODS)})")
    return base, control


class RandomScoreForecaster(BatchForecaster):
    """The control forecaster: a forecast that carries no information about the candidate.

    Each (problem, candidate) gets bin probabilities drawn from a flat Dirichlet (uniform on the
    simplex) by a generator seeded with (salt, `seed`, sha256 of the problem and candidate ids).
    So a forecast depends only on the seed and the ids: it is the same whatever the call order,
    the batch, the method or the process, and every method's control at one seed scores a child
    alike. Expected log2 speedups of different candidates are independent and continuous, so
    ranking children by them is a uniformly random order. It never abstains, has no calibration
    set and does not adapt to a search's measurements.
    """

    name = CONTROL

    def __init__(self, seed: int):
        if not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ConfigError(f"the random control's seed must be an integer >= 0, got {seed!r}")
        self.seed = int(seed)

    def probabilities(self, problem_id: str, candidate_id: str) -> np.ndarray:
        """The 8 bin probabilities of one candidate at this seed."""
        digest = hashlib.sha256(f"{problem_id}\0{candidate_id}".encode()).digest()
        rng = np.random.default_rng([_SALT, self.seed, int.from_bytes(digest[:8], "big")])
        return rng.dirichlet(np.ones(bins.N_BINS))

    def forecast_batch(self, items, hardware, relative_to: str = "reference", parents=None) -> list[Forecast]:
        return [Forecast(forecaster=self.name, candidate_id=c.id, problem_id=p.id, hardware_key=hardware.key,
                         probabilities=tuple(self.probabilities(p.id, c.id)), relative_to=relative_to)
                for p, c in items]


def tie_floor(tie_rel: float) -> float:
    """The share of a target a best must reach to count as reaching it (1e-9: float round-off, so
    tie_rel = 0 is the exact comparison)."""
    if tie_rel < 0:
        raise ConfigError(f"tie_rel must be >= 0 (a fraction), got {tie_rel}")
    return (1 - tie_rel) * (1 - 1e-9)


def first_reach(curve: Sequence[Sequence[float]], target: float, floor: float) -> int | None:
    """GPU measurements after which the best-so-far `curve` ((measurements, best) steps) first
    reaches target * floor; None when it never does."""
    return next((used for used, best in curve if best >= target * floor), None)


def censored_fraction(run: dict[str, Any], target: float, floor: float) -> float:
    """The run's budget fraction to reach `target`, (budget + 1) / budget when it never does."""
    hit = first_reach(run["curve"], target, floor)
    return (hit if hit is not None else run["budget"] + 1) / run["budget"]


def bootstrap_mean_ci(values: Sequence[float], n_boot: int = N_BOOT, level: float = CI_LEVEL,
                      seed: int = BOOT_SEED) -> list[float] | None:
    """Percentile bootstrap interval [low, high] of the mean of `values` (each value one resampled
    unit); None for fewer than two values."""
    x = np.asarray(values, dtype=float)
    if len(x) < 2:
        return None
    if not 0 < level < 1 or n_boot < 1:
        raise ConfigError(f"need 0 < level < 1 and n_boot >= 1, got {level} and {n_boot}")
    idx = np.random.default_rng(seed).integers(0, len(x), size=(n_boot, len(x)))
    means = x[idx].mean(axis=1)
    lo, hi = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return [float(lo), float(hi)]


def vs_random(results: list[dict[str, Any]], targets: dict[str, float], tie_rel: float = 0.0,
              n_boot: int = N_BOOT, seed: int = BOOT_SEED) -> dict[str, dict[str, Any]]:
    """For each method that has its `[random]` control in `results`: the difference of budget
    fractions to reach the problem's target (control's minus method's, censored as in the module
    docstring) over the (problem, seed) pairs where both ran and the problem has a target.

    Returns method -> {vs_random_diff, vs_random_diff_ci, vs_random_pairs, vs_random_less_share,
    vs_random_tie_share, vs_random_more_share} (the shares of pairs where the method needed less,
    the same, more budget than its control)."""
    floor = tie_floor(tie_rel)
    runs = {(r["method"], r["problem_id"], r["seed"]): r for r in results}
    out: dict[str, dict[str, Any]] = {}
    for method in sorted({r["method"] for r in results}):
        ctl = control_name(method)
        if split_control(method)[1] is not None or not any(k[0] == ctl for k in runs):
            continue
        diffs = []
        for (meth, pid, s), r in sorted(runs.items()):
            c = runs.get((ctl, pid, s))
            if meth != method or c is None or pid not in targets:
                continue
            diffs.append(censored_fraction(c, targets[pid], floor) - censored_fraction(r, targets[pid], floor))
        n = len(diffs)
        out[method] = {
            "vs_random_diff": float(np.mean(diffs)) if n else None,
            "vs_random_diff_ci": bootstrap_mean_ci(diffs, n_boot, seed=seed),
            "vs_random_pairs": n,
            "vs_random_less_share": sum(d > 0 for d in diffs) / n if n else None,
            "vs_random_tie_share": sum(d == 0 for d in diffs) / n if n else None,
            "vs_random_more_share": sum(d < 0 for d in diffs) / n if n else None,
        }
    return out


def rule(tie_rel: float, budget: int | None = None) -> dict[str, Any]:
    """The statement of the reach rule and the difference, as written into a results file."""
    cens = f"{budget + 1}/{budget}" if budget else "(budget + 1) / budget"
    return {
        "control": (f"<method>[{CONTROL}]: the same method, budget, seeds, k, m and candidate pools with "
                    "each child's forecast replaced by bin probabilities drawn from a flat Dirichlet, seeded "
                    "by the search seed and the problem and candidate ids (RandomScoreForecaster in "
                    "benchmarks/search_control.py): a uniformly random ranking of the children"),
        "reaches": (f"a run reaches measure_all's median final best T on its problem after the first n GPU "
                    f"measurements with best-so-far >= T * (1 - tie_rel), tie_rel = {tie_rel:g} "
                    + ("(exact)" if tie_rel == 0 else "(ties within the measured timing noise)")),
        "fraction": f"n / budget; a run that never reaches T is censored at {cens}",
        "vs_random_diff": "mean over (problem, seed) pairs of control's fraction minus method's "
                          "(positive: the forecaster needs less budget than random scores)",
        "vs_random_diff_ci": (f"{CI_LEVEL:.0%} percentile bootstrap of that mean, {N_BOOT} resamples of "
                              f"(problem, seed) pairs, bootstrap seed {BOOT_SEED}"),
        "tie_rel": tie_rel,
    }


def protocol_factory(factory, protocol):
    """Under the held-out protocol (workbench.landscape.protocol): a search benchmark's
    forecaster factory `(records, searched problem id) -> forecaster` that fits only on the
    training problems' rows: `factory` sees the records without any held-out problem's rows
    (the searched one's included), and the forecaster it returns refuses held-out rows at any
    later `fit` (HeldOutLeakError)."""
    from workbench.landscape.protocol import guard_forecaster

    def make(records, searched: str):
        fc = factory(protocol.training_only(records), searched)
        return guard_forecaster(fc, protocol, "refitting the search benchmark's forecaster")

    return make
