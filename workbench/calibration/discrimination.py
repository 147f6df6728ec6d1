"""Discriminative metrics, skill against a reference forecast, and bootstrap intervals over problems.

Why these exist: in most pools of candidates the top 10% by almost any score holds a kernel within
a few percent of the pool's best, and a constant forecast of the bin frequencies has an ECE near 0,
so top-10% recovery and ECE alone cannot tell a forecaster from random scores. The metrics here can.
Conventions: `scores` (n,) rank candidates (higher = forecast faster, e.g. the expected
log2-speedup); `speedups` (n,) are measured, positive; `problems` (n,) name each row's problem;
`probs` (n, 8) and `y` (n,) as in `workbench.calibration.metrics`.

- Pairwise ordering accuracy at a ratio r: over pairs of rows of one problem whose measured
  speedups are at least r apart (max / min >= r), the share whose scores order them the same way;
  a tie in score counts one half (so any constant score gets exactly 0.5). Pooled over all pairs.
- Screening of groups (n candidates, the k with the highest scores measured): hit = the group's
  best measured candidate is among the k; ratio = best measured among the k / the group's best.
  Ties in score at the k-th place are broken uniformly at random, in exact expectation. Groups are
  real sibling sets (rows sharing a problem and a parent, more than k of them) or `draws` groups
  of `group_size` rows drawn per problem (seeded; the same rows for every forecaster). Pooled
  over groups.
- Skill against a reference (climatology: the bin frequencies of the training problems):
  1 - sum(score) / sum(reference score) over the same rows, for Brier and CRPS. 0 = no better
  than the reference, 1 = perfect, < 0 = worse.
- Sharpness: the mean max probability (`metrics.sharpness`), beside ECE (`metrics.ece`).
- Spearman: within each problem (median over problems; problems with a constant score or speedup
  have none) and pooled over all rows.

Every metric but the pooled Spearman is a function of per-problem parts (`Statistic`): a CI
resamples the problems with replacement (`n_boot` times, seeded) and recomputes it; two reports
built with the same problem order and seed use the same resamples, so differences between them
are paired (`compare`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Hashable, Sequence

import numpy as np

from workbench.calibration import metrics
from workbench.calibration.errors import MetricInputError

#: The ratio thresholds of the default report, keyed as pair_acc_<round(100 r)>.
PAIR_RATIOS = (1.25, 1.10)


# --------------------------------------------------------------------------- statistics
@dataclass(frozen=True)
class Statistic:
    """A metric built from per-problem parts.

    `parts` is (P, d): one row of sums per problem; the metric of a sample of problems is
    `reduce(sum of their rows)` (`reduce` maps (m, d) to (m,)). With `reduce` None, `parts` is
    (P,) per-problem values and the metric is their median (NaNs dropped).
    """

    parts: np.ndarray
    reduce: Callable[[np.ndarray], np.ndarray] | None = None

    def value(self) -> float:
        if self.reduce is None:
            return float(_nanmedian(self.parts[None, :])[0])
        return float(self.reduce(self.parts.sum(axis=0)[None, :])[0])

    def on_resamples(self, idx: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """The metric on each resample: `idx` (B, P) problem indices, `counts` (B, P) how often
        each problem was drawn."""
        if self.reduce is None:
            return _nanmedian(self.parts[idx])
        return np.asarray(self.reduce(counts @ self.parts), dtype=float)


def _nanmedian(a: np.ndarray) -> np.ndarray:
    out = np.full(a.shape[0], np.nan)
    ok = np.isfinite(a)
    for i in range(a.shape[0]):
        if ok[i].any():
            out[i] = float(np.median(a[i][ok[i]]))
    return out


def _ratio(m: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(m[:, 1] > 0, m[:, 0] / np.where(m[:, 1] > 0, m[:, 1], 1.0), np.nan)


def _skill(m: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(m[:, 1] > 0, 1.0 - m[:, 0] / np.where(m[:, 1] > 0, m[:, 1], 1.0), np.nan)


def resamples(n_problems: int, n_boot: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(idx, counts): `n_boot` resamples of `n_problems` problems with replacement, seeded."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n_problems, size=(n_boot, n_problems))
    counts = np.zeros((n_boot, n_problems))
    np.add.at(counts, (np.repeat(np.arange(n_boot), n_problems), idx.ravel()), 1.0)
    return idx, counts


def percentile_ci(boot: np.ndarray, level: float = 0.95) -> list[float]:
    """[low, high] percentile interval of the finite bootstrap values ([nan, nan] if none)."""
    b = np.asarray(boot, dtype=float)
    b = b[np.isfinite(b)]
    if len(b) == 0:
        return [float("nan"), float("nan")]
    a = (1.0 - level) / 2.0
    lo, hi = np.quantile(b, [a, 1.0 - a])
    return [float(lo), float(hi)]


# --------------------------------------------------------------------------- row checks
def problem_index(problems: Sequence[Hashable], order: Sequence[Hashable] | None = None
                  ) -> tuple[list, np.ndarray]:
    """(problem keys in `order` or first-appearance order, each row's index into them)."""
    keys = list(order) if order is not None else list(dict.fromkeys(problems))
    pos = {k: i for i, k in enumerate(keys)}
    try:
        pid = np.asarray([pos[g] for g in problems], dtype=int)
    except KeyError as e:
        raise MetricInputError(f"problem {e.args[0]!r} is not in the given problem order") from None
    return keys, pid


def _check(scores, speedups, pid) -> tuple[np.ndarray, np.ndarray]:
    s = np.asarray(scores, dtype=float)
    v = np.asarray(speedups, dtype=float)
    if not (s.shape == v.shape == pid.shape) or s.ndim != 1:
        raise MetricInputError(f"scores, speedups and problems must be 1-D of one length, got "
                               f"{s.shape}, {v.shape}, {pid.shape}")
    if np.any(~np.isfinite(v)) or np.any(v <= 0):
        raise MetricInputError("speedups must be positive and finite (drop failed candidates)")
    if np.any(~np.isfinite(s)):
        raise MetricInputError("scores must be finite")
    return s, v


# --------------------------------------------------------------------------- pairs
def pair_parts(scores, speedups, pid: np.ndarray, n_problems: int, ratio: float) -> Statistic:
    """Pairwise ordering accuracy at `ratio` as per-problem (share-right sum, pairs) parts."""
    if not ratio >= 1.0:
        raise MetricInputError(f"ratio is a speedup ratio >= 1, got {ratio}")
    s, v = _check(scores, speedups, pid)
    lv = np.log(v)
    gap = math.log(ratio) - 1e-12
    parts = np.zeros((n_problems, 2))
    for p in range(n_problems):
        rows = np.flatnonzero(pid == p)
        if len(rows) < 2:
            continue
        i, j = np.triu_indices(len(rows), k=1)
        dv = lv[rows][i] - lv[rows][j]
        keep = np.abs(dv) >= gap
        if not keep.any():
            continue
        ds = s[rows][i][keep] - s[rows][j][keep]
        right = np.where(ds == 0, 0.5, (np.sign(ds) == np.sign(dv[keep])).astype(float))
        parts[p] = (right.sum(), keep.sum())
    return Statistic(parts, _ratio)


def pair_accuracy(scores, speedups, problems: Sequence[Hashable], ratio: float = 1.25) -> float:
    """Share of same-problem pairs at least `ratio` apart ordered right by score (ties half);
    NaN when there is no such pair."""
    keys, pid = problem_index(problems)
    return pair_parts(scores, speedups, pid, len(keys), ratio).value()


# --------------------------------------------------------------------------- screening
def screen_group(scores: np.ndarray, speedups: np.ndarray, k: int) -> tuple[float, float]:
    """(hit, ratio) of measuring the `k` highest-scored rows of one group, in expectation over
    uniformly random tie-breaking of the scores at the k-th place (see the module doc)."""
    s = np.asarray(scores, dtype=float)
    v = np.asarray(speedups, dtype=float)
    n = len(s)
    if n <= k:
        return 1.0, 1.0
    best = float(v.max())
    kth = float(np.sort(s)[::-1][k - 1])
    above = s > kth
    tied = s == kth
    r = k - int(above.sum())  # picked at random among the tied
    t = int(tied.sum())
    total = math.comb(t, r)
    if np.any(v[above] == best):
        hit = 1.0
    else:
        b = int(np.sum(v[tied] == best))
        hit = 1.0 - math.comb(t - b, r) / total
    top = float(v[above].max()) if above.any() else -math.inf
    u = np.sort(v[tied])[::-1]
    expected = sum(math.comb(t - j, r - 1) / total * max(top, float(u[j - 1]))
                   for j in range(1, t - r + 2))
    return hit, expected / best


def screen_parts(scores, speedups, pid: np.ndarray, n_problems: int,
                 groups: Sequence[np.ndarray], k: int) -> tuple[Statistic, Statistic]:
    """(hit rate, best-picked / best ratio) of `groups` (arrays of row indices, each within one
    problem) screened with top `k`, as per-problem (sum, groups) parts."""
    s, v = _check(scores, speedups, pid)
    hits = np.zeros((n_problems, 2))
    ratios = np.zeros((n_problems, 2))
    for g in groups:
        p = int(pid[g[0]])
        hit, ratio = screen_group(s[g], v[g], k)
        hits[p] += (hit, 1.0)
        ratios[p] += (ratio, 1.0)
    return Statistic(hits, _ratio), Statistic(ratios, _ratio)


def sibling_groups(pid: np.ndarray, parents: Sequence[str | None], k: int) -> list[np.ndarray]:
    """Row indices of each real sibling set: rows of one problem sharing a parent (None or ''
    = no parent), kept when the set has more than `k` rows (a smaller set is always a hit)."""
    sets: dict[tuple[int, str], list[int]] = {}
    for i, (p, par) in enumerate(zip(pid.tolist(), parents)):
        if par:
            sets.setdefault((p, str(par)), []).append(i)
    return [np.asarray(rows) for rows in sets.values() if len(rows) > k]


def random_groups(pid: np.ndarray, n_problems: int, size: int = 16, draws: int = 100,
                  seed: int = 0) -> list[np.ndarray]:
    """`draws` groups of `size` rows drawn without replacement from each problem with at least
    `size` rows; seeded by (seed, problem index), so the same rows for every forecaster."""
    out = []
    for p in range(n_problems):
        rows = np.flatnonzero(pid == p)
        if len(rows) < size:
            continue
        rng = np.random.default_rng([seed, p])
        out.extend(rng.choice(rows, size=size, replace=False) for _ in range(draws))
    return out


# --------------------------------------------------------------------------- probabilities
def _sum_parts(values: np.ndarray, pid: np.ndarray, n_problems: int) -> np.ndarray:
    """(P, d) per-problem sums of row values (n, d)."""
    out = np.zeros((n_problems, values.shape[1]))
    np.add.at(out, pid, values)
    return out


def skill_parts(rows_loss: np.ndarray, reference_loss: np.ndarray, pid: np.ndarray,
                n_problems: int) -> Statistic:
    """Skill 1 - sum(loss) / sum(reference loss) as per-problem parts."""
    both = np.stack([np.asarray(rows_loss, float), np.asarray(reference_loss, float)], axis=1)
    return Statistic(_sum_parts(both, pid, n_problems), _skill)


def ece_parts(probs, y, pid: np.ndarray, n_problems: int, n_buckets: int = 10) -> Statistic:
    """ECE (max-probability confidence, equal-width buckets; as `metrics.ece`) as per-problem
    bucket sums (count, confidence sum, correct sum)."""
    p, t = metrics.as_arrays(probs, y)
    conf = p.max(axis=1)
    correct = (p.argmax(axis=1) == t).astype(float)
    b = np.minimum((conf * n_buckets).astype(int), n_buckets - 1)
    rows = np.zeros((len(t), 3 * n_buckets))
    rows[np.arange(len(t)), b] = 1.0
    rows[np.arange(len(t)), n_buckets + b] = conf
    rows[np.arange(len(t)), 2 * n_buckets + b] = correct

    def reduce(m: np.ndarray) -> np.ndarray:
        n = m[:, :n_buckets].sum(axis=1)
        gap = np.abs(m[:, 2 * n_buckets:] - m[:, n_buckets: 2 * n_buckets]).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(n > 0, gap / np.where(n > 0, n, 1.0), np.nan)

    return Statistic(_sum_parts(rows, pid, n_problems), reduce)


def mean_parts(values, pid: np.ndarray, n_problems: int) -> Statistic:
    """The mean of row values as per-problem (sum, count) parts."""
    x = np.asarray(values, dtype=float)
    return Statistic(_sum_parts(np.stack([x, np.ones_like(x)], axis=1), pid, n_problems), _ratio)


def spearman_within(scores, speedups, pid: np.ndarray, n_problems: int) -> Statistic:
    """Each problem's Spearman correlation of score and log2 speedup (NaN with fewer than 2 rows
    or a constant side); the statistic is their median."""
    s, v = _check(scores, speedups, pid)
    vals = np.full(n_problems, np.nan)
    for p in range(n_problems):
        rows = np.flatnonzero(pid == p)
        if len(rows) >= 2:
            vals[p] = metrics.spearman(s[rows], np.log2(v[rows]))
    return Statistic(vals, None)


def top_k_parts(scores, speedups, keys: list, pid: np.ndarray, k: float = 0.10) -> Statistic:
    """Each problem's `metrics.top_k_recovery`; the statistic is their median."""
    rec = metrics.top_k_recovery(scores, speedups, pid.tolist(), k)
    return Statistic(np.asarray([rec.get(p, np.nan) for p in range(len(keys))]), None)


# --------------------------------------------------------------------------- report
@dataclass
class Report:
    """Every metric of one forecaster on aligned rows, with the per-problem parts for CIs.

    `statistics` maps a key (pair_acc_125, ...) to its `Statistic`; `counts` holds how many
    pairs, groups, rows and problems each rests on; `problems` is the problem order (pairing).
    """

    problems: list
    statistics: dict[str, Statistic]
    counts: dict[str, int]
    extra: dict[str, float] = field(default_factory=dict)
    n_boot: int = 1000
    seed: int = 0

    def values(self) -> dict[str, float]:
        return {k: st.value() for k, st in self.statistics.items()}

    def boot(self) -> dict[str, np.ndarray]:
        idx, counts = resamples(len(self.problems), self.n_boot, self.seed)
        return {k: st.on_resamples(idx, counts) for k, st in self.statistics.items()}

    def to_dict(self, level: float = 0.95) -> dict:
        """Each key with its value and `<key>_ci` ([low, high]), then `extra` and `counts`."""
        out: dict = {}
        boot = self.boot() if self.n_boot > 0 else {}
        for k, v in self.values().items():
            out[k] = v
            if k in boot:
                out[f"{k}_ci"] = percentile_ci(boot[k], level)
        out.update(self.extra)
        out.update(self.counts)
        return out


def report(probs, y, scores, speedups, problems: Sequence[Hashable], *,
           reference_probs=None, parents: Sequence[str | None] | None = None, k: int = 4,
           group_size: int = 16, draws: int = 100, ratios: Sequence[float] = PAIR_RATIOS,
           n_boot: int = 1000, seed: int = 0, problem_order: Sequence[Hashable] | None = None
           ) -> Report:
    """The discriminative report of aligned rows (see the module doc for each metric).

    Keys: pair_acc_<100 r> per ratio, random<group_size>_hit_top<k> and _ratio, sibling_hit_top<k>
    and sibling_ratio (when `parents` gives sets of more than k), brier_skill and crps_skill
    (with `reference_probs`, the reference forecast of the same rows), ece, sharpness,
    spearman_within_median, top10_recovery_median; `extra` holds spearman_pooled (no CI).
    `problem_order` fixes the problem order (pass the same one, and the same seed, to reports
    that are to be compared)."""
    keys, pid = problem_index(problems, problem_order)
    P = len(keys)
    s, v = _check(scores, speedups, pid)
    p, t = metrics.as_arrays(probs, y)
    if len(t) != len(s):
        raise MetricInputError(f"{len(t)} probability rows but {len(s)} scores")
    st: dict[str, Statistic] = {}
    counts: dict[str, int] = {"n": len(s), "n_problems": int(len(set(pid.tolist())))}
    for r in ratios:
        name = f"pair_acc_{round(100 * r)}"
        st[name] = pair_parts(s, v, pid, P, r)
        counts[f"n_pairs_{round(100 * r)}"] = int(st[name].parts[:, 1].sum())
    rnd = random_groups(pid, P, group_size, draws, seed)
    if rnd:
        hit, ratio = screen_parts(s, v, pid, P, rnd, k)
        st[f"random{group_size}_hit_top{k}"], st[f"random{group_size}_ratio"] = hit, ratio
    counts[f"n_random{group_size}_groups"] = len(rnd)
    if parents is not None:
        sib = sibling_groups(pid, list(parents), k)
        if sib:
            hit, ratio = screen_parts(s, v, pid, P, sib, k)
            st[f"sibling_hit_top{k}"], st["sibling_ratio"] = hit, ratio
        counts["n_sibling_sets"] = len(sib)
        counts["n_sibling_rows"] = int(sum(len(g) for g in sib))
    if reference_probs is not None:
        ref, _ = metrics.as_arrays(reference_probs, t)
        if ref.shape != p.shape:
            raise MetricInputError("reference_probs must align with probs row by row")
        st["brier_skill"] = skill_parts(metrics.brier_rows(p, t), metrics.brier_rows(ref, t), pid, P)
        st["crps_skill"] = skill_parts(metrics.crps_rows(p, t), metrics.crps_rows(ref, t), pid, P)
    st["ece"] = ece_parts(p, t, pid, P)
    st["sharpness"] = mean_parts(p.max(axis=1), pid, P)
    st["spearman_within_median"] = spearman_within(s, v, pid, P)
    st["top10_recovery_median"] = top_k_parts(s, v, keys, pid)
    extra = {"spearman_pooled": metrics.spearman(s, np.log2(v))}
    return Report(keys, st, counts, extra, n_boot, seed)


def compare(a: Report, b: Report, level: float = 0.95) -> dict[str, dict]:
    """a minus b for every key both have: {key: {"diff": value, "ci": [low, high]}}, on paired
    resamples. Both reports must share the problem order, n_boot and seed."""
    if a.problems != b.problems or a.n_boot != b.n_boot or a.seed != b.seed:
        raise MetricInputError("compare() needs reports built on the same problems in the same "
                               "order with the same n_boot and seed")
    va, vb = a.values(), b.values()
    ba, bb = a.boot(), b.boot()
    return {k: {"diff": va[k] - vb[k], "ci": percentile_ci(ba[k] - bb[k], level)}
            for k in a.statistics if k in b.statistics}
