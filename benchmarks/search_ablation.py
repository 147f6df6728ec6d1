"""uncertainty_aware's trust rules side by side, in replay, at the settings of search-h100.json.

    PYTHONPATH=. python benchmarks/search_ablation.py --gpu h100 --budget 16 --seeds 5 --k 2 --m 3 --jobs 16 \
        [--variants 'measure_all;screen_topk;ua:no_gain,rank=ei'] [--out DIR]

For every problem the replay benchmark uses (benchmarks/search_bench.py: cached measurements,
replay generator, learned forecaster fitted leave-one-problem-out), one forecaster is fitted and
every variant below runs on seeds 0..seeds-1 with the same GPU budget:

- measure_all, screen_topk          the baseline and the study's method, for reference;
- ua:no_gain                        uncertainty_aware, trust_rule="no_gain": a child is trusted (not
                                    measured) when the conformal no-gain certificate (risk 0.1,
                                    delta 0.1, gain over the parent) covers it;
- ua:no_gain,no_gain_risk=0.2       a looser certificate;
- ua:no_gain,improve_over=best      gain counted over the best kernel measured so far;
- ua:no_gain,rank=ei                children ranked by expected improvement over the parent
                                    instead of by expected log2 speedup;
- ua:no_gain,backfill=False         only the untrusted among the top k are measured (a trusted
                                    child's measurement is saved, not given to a lower-ranked child);
- ua:policy                         uncertainty_aware, trust_rule="policy" (the default):
                                    bin-confidence policy and expected improvement below min_gain.

The variants were fixed before a run; backfill=False was added after the first full run showed
no_gain needing more budget than screen_topk (6 uncertainty_aware variants in all have been run). Each is
scored with search_bench.metrics against this run's measure_all (exact ties, the replay rule),
plus the mean number of trusted children per run. Writes
benchmarks/results/search-ablation-<gpu>.json ({"benchmark": "search-ablation", "gpu", "date",
"commit", "metrics": {variant: {...}}, "setup", "runs"}) and a copy in --out when given; a
partial run (--max-problems, or fewer than 5 seeds) goes to --out only.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import commit, write_results  # noqa: E402
from search_bench import RESULTS_DIR, bench_spec, eligible_problems, learned_factory, metrics, run_one  # noqa: E402

from workbench.spec import Target  # noqa: E402
from workbench.store import Store  # noqa: E402

#: name -> (method, keyword arguments)
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "measure_all": ("measure_all", {}),
    "screen_topk": ("screen_topk", {}),
    "ua:no_gain": ("uncertainty_aware", {"trust_rule": "no_gain"}),
    "ua:no_gain,no_gain_risk=0.2": ("uncertainty_aware", {"trust_rule": "no_gain", "no_gain_risk": 0.2}),
    "ua:no_gain,improve_over=best": ("uncertainty_aware", {"trust_rule": "no_gain", "improve_over": "best"}),
    "ua:no_gain,rank=ei": ("uncertainty_aware", {"trust_rule": "no_gain", "rank": "ei"}),
    "ua:no_gain,backfill=False": ("uncertainty_aware", {"trust_rule": "no_gain", "backfill": False}),
    "ua:policy": ("uncertainty_aware", {"trust_rule": "policy"}),
}

_WORKER: dict[str, Any] = {}


def _init(records) -> None:
    _WORKER["records"] = records


def _problem(args: tuple) -> list[dict[str, Any]]:
    problem, gpu, budget, seeds, k, m, variants = args
    records = _WORKER["records"]
    forecaster = learned_factory(records, problem.id)
    out = []
    with tempfile.TemporaryDirectory(prefix="search_ablation_") as tmp:
        with Store(Path(tmp) / "ablation.sqlite") as store:
            for name in variants:
                method, kw = VARIANTS[name]
                for seed in seeds:
                    spec = bench_spec(problem.id, Target("replay", key=gpu), budget, k, m)
                    r = run_one(store, problem, records, spec.replace(method=method, seed=seed), method, forecaster,
                                kw)
                    out.append({**r, "method": name})
    return out


def summarise(runs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """search_bench.metrics per variant (exact ties) plus the mean trusted children per run."""
    out = metrics(runs)
    for name, row in out.items():
        trusted = [r.get("trusted", 0) for r in runs if r["method"] == name]
        row["trusted_mean"] = statistics.fmean(trusted) if trusted else None
    return out


def parse_variants(text: str) -> list[str]:
    """Variant names from "a;b;c" (';' separates: names such as "ua:no_gain,rank=ei" hold
    commas); exits on an unknown name or when measure_all, the baseline, is missing."""
    variants = [v.strip() for v in text.split(";") if v.strip()]
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown or "measure_all" not in variants:
        raise SystemExit(f"unknown variants {unknown} (separate names with ';'; known: "
                         f"{'; '.join(VARIANTS)}); measure_all (the baseline) must be included")
    return variants


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=None)
    ap.add_argument("--gpu", default="h100")
    ap.add_argument("--budget", type=int, default=16)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--k", type=int, default=2)
    ap.add_argument("--m", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--max-problems", type=int, default=None)
    ap.add_argument("--variants", default=";".join(VARIANTS),
                    help="semicolon-separated subset (names hold commas) of: " + "; ".join(VARIANTS))
    ap.add_argument("--out", default=None, help="also write the results file into this directory")
    args = ap.parse_args(argv)
    variants = parse_variants(args.variants)

    from workbench.dataset.shipped import DEFAULT_SHIPPED_DIR, load_shipped

    records = load_shipped(Path(args.data) if args.data else DEFAULT_SHIPPED_DIR)
    if any(m.reason == "synthetic" for m in records.measurements):
        raise SystemExit("the data holds synthetic measurements; the ablation only runs on real ones")
    problems = eligible_problems(records, args.gpu, args.budget)[: args.max_problems]
    seeds = list(range(args.seeds))
    t0 = time.time()
    tasks = [(p, args.gpu, args.budget, seeds, args.k, args.m, variants) for p in problems]
    runs: list[dict[str, Any]] = []
    bar = tqdm(total=len(problems), desc="problems", unit="problem", file=sys.stderr)
    if args.jobs == 1:
        _init(records)
        for t in tasks:
            runs += _problem(t)
            bar.update(1)
    else:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(args.jobs, mp_context=mp.get_context("fork"), initializer=_init,
                                 initargs=(records,)) as pool:
            for r in pool.map(_problem, tasks):
                runs += r
                bar.update(1)
    bar.close()
    doc = {"benchmark": "search-ablation", "gpu": args.gpu, "date": time.strftime("%Y-%m-%d"),
           "commit": commit(), "metrics": summarise(runs),
           "setup": {"budget": args.budget, "seeds": args.seeds, "k": args.k, "m": args.m,
                     "forecaster": "learned (leave-one-problem-out)", "mode": "replay", "tie_rel": 0.0,
                     "problems": [p.id for p in problems], "variants": {n: VARIANTS[n] for n in variants},
                     "seconds": round(time.time() - t0, 1)},
           "runs": runs}
    full = args.max_problems is None and args.seeds >= 5  # a partial run never goes to results/
    write_results(RESULTS_DIR, f"search-ablation-{args.gpu}.json", json.dumps(doc, indent=1), full, args.out,
                  "a partial run (--max-problems, or fewer than 5 seeds) is written only to --out DIR; "
                  "nothing written")
    for name, row in doc["metrics"].items():
        print(f"{name:40s} win {row['win_or_tie_rate_equal_budget']} budget {row['budget_fraction_to_match_median']} "
              f"best {row['final_best_speedup_median']:.3f} considered {row['candidates_considered_mean']:.1f} "
              f"trusted {row['trusted_mean']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
