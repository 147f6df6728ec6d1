"""Bring-your-own-problem benchmark: the KernelBench-style corpus end to end on one GPU.

    PYTHONPATH=. python benchmarks/byo_bench.py --out $OUT            # one GPU, ~9 minutes
    PYTHONPATH=. python benchmarks/byo_bench.py --cpu                 # smoke (Triton interpreter)

For the corpus of problem files under tests/problems/corpus (no zoo kernels, no declared counts,
no CPU_SIZES), in one process:

1. every problem is loaded as `workbench problems import` loads it (counts derived from the
   reference); an *identity* candidate (the reference renamed ModelNew) is forecast by the
   roofline forecaster and by the learned forecaster fitted on the shipped measurements of this
   GPU (the corpus is not in them). `identity_bin8_conf_max` is the largest probability either
   gives bin 8 (> 4x) for such a candidate: the identity is 1x, so a high value is the failure
   the issue reported.
2. problems are searched in corpus order (live, screen_topk, `--budget` GPU measurements each,
   seeds from the zoo generator, which lowers the reference into Triton templates for these
   problems) while the time budget allows another; `searched` counts searches that ran to the end
   of their budget. A problem with no seed counts as searched with no correct candidate.
3. for each searched problem the reference is timed eager and under torch.compile in this
   process (`compile_baseline.time_compiled`, mode `--compile-mode`).

Metrics: `problems`, `searched`, `with_correct_triton_candidate` (searched problems with at least
one correct Triton candidate), `best_over_eager_median` (median over searched problems with a
correct candidate of the best measured speedup over the eager reference), `best_over_compile_median`
(the same divided by that problem's torch.compile speedup over eager), `identity_bin8_conf_max`.
A full GPU run writes benchmarks/results/byo-<gpu>.json (and a copy under --out); --cpu never
writes a results file (its timings are interpreter times).
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

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import commit, write_results  # noqa: E402

from workbench.errors import WorkbenchError  # noqa: E402
from workbench.records import Candidate, Hardware, Problem, now_iso  # noqa: E402

CORPUS = ROOT / "tests" / "problems" / "corpus"
RESULTS = ROOT / "benchmarks" / "results"


def identity(problem: Problem) -> Candidate:
    """The reference itself as a candidate (its speedup is 1x by construction)."""
    return Candidate.from_source(problem.id, problem.source.replace("class Model(", "class ModelNew("),
                                 origin="identity")


def fit_learned(hardware_key: str, data: Path | None, progress) -> Any:
    """The learned forecaster fitted on the shipped measurements of `hardware_key` (None when
    there are none)."""
    from workbench.dataset.shipped import load_shipped
    from workbench.forecast.fitted import fit_or_load

    problems, candidates, measurements = load_shipped(data)
    ms = [m for m in measurements if m.hardware_key == hardware_key]
    if not ms:
        return None
    return fit_or_load(problems, candidates, ms, hardware_key=hardware_key, progress=progress,
                       cache_dir=tempfile.mkdtemp(prefix="byo-fit-"))


def identity_forecasts(problems: list[Problem], forecasters: dict[str, Any], hw: Hardware) -> dict[str, Any]:
    """p(bin 8) of the identity candidate per forecaster and problem."""
    out: dict[str, Any] = {}
    for name, fc in forecasters.items():
        out[name] = {p.id: float(fc.forecast(p, identity(p), hw).probabilities[-1]) for p in problems}
    return out


def search_problem(store, problem: Problem, executor, forecaster, budget: int, seed: int) -> dict[str, Any]:
    from workbench.search import MutationGenerator, SearchRun, ZooGenerator, make_method
    from workbench.search.selection import make_selector

    row: dict[str, Any] = {"counts": problem.count_source}
    t0 = time.time()
    store.put_problem(problem)
    run = SearchRun(store, problem, executor, MutationGenerator(ZooGenerator()), forecaster,
                    make_method("screen_topk", k=4, m=4), budget=budget, seed=seed,
                    selector=make_selector("puct"), max_seeds=4)
    try:
        run.start()
        run.run(progress=False)
    except WorkbenchError as e:  # no seed: nothing lowers and no zoo kernel
        row.update(finished=True, error=str(e)[:300], best_speedup=None, correct_triton=0,
                   search_s=round(time.time() - t0, 1))
        return row
    s = run.summary()
    correct = 0
    for m in store.measurements(problem_id=problem.id, hardware_key=executor.hardware.key):
        c = store.get_candidate(m.candidate_id)
        if m.ok and c is not None and c.backend == "triton":
            correct += 1
    row.update(finished=bool(s["finished"]), finish_reason=s["finish_reason"],
               best_speedup=s["best_speedup"], gpu_measurements=s["gpu_measurements"],
               correct_triton=correct, search_s=round(time.time() - t0, 1))
    return row


def compile_speedup(problem: Problem, mode: str) -> dict[str, Any]:
    from workbench.execution.compile_baseline import time_compiled

    try:
        r = time_compiled(problem, mode=mode)
    except Exception as e:  # noqa: BLE001 - a reference torch.compile cannot handle is recorded
        return {"error": f"{type(e).__name__}: {e}"[:300]}
    return {k: r[k] for k in ("eager_ms", "compiled_ms", "speedup_over_eager", "compile_s") if k in r}


def _median(xs: list[float]) -> float | None:
    return float(statistics.median(xs)) if xs else None


def run(args) -> dict[str, Any]:
    from workbench.execution.executors import CPUExecutor, LocalGPUExecutor
    from workbench.forecast.roofline import RooflineForecaster
    from workbench.problems import load_dir
    from workbench.store import Store

    t_start = time.time()
    problems, errors = load_dir(args.corpus)
    if errors:
        raise SystemExit("corpus files failed to load:\n" + "\n".join(map(str, errors)))
    if args.limit:
        problems = problems[: args.limit]
    executor = (CPUExecutor(workers=2, timeout_s=300, run_timeout_s=120) if args.cpu
                else LocalGPUExecutor(gpus=[args.gpu_index], workers=args.workers))
    hw_key = executor.hardware.key
    forecast_hw = Hardware(key="h100", name="H100", compute_capability="9.0", sm_count=132) \
        if args.cpu else executor.hardware
    log = (lambda msg: print(msg, file=sys.stderr, flush=True))
    forecasters: dict[str, Any] = {"roofline": RooflineForecaster()}
    if not args.no_learned:
        learned = fit_learned(forecast_hw.key, args.data, log)
        if learned is not None:
            forecasters["learned"] = learned
    idf = identity_forecasts(problems, forecasters, forecast_hw)
    search_fc = forecasters.get(args.forecaster) or forecasters["roofline"]
    rows: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "byo.sqlite") as store, executor:
        per: list[float] = []
        for p in problems:
            spent = time.time() - t_start
            expect = statistics.mean(per) if per else 0.0
            if spent + expect > args.time_budget_s:
                break
            t0 = time.time()
            row = search_problem(store, p, executor, search_fc, args.budget, args.seed)
            if not args.cpu and row.get("best_speedup"):
                row["compile"] = compile_speedup(p, args.compile_mode)
            per.append(time.time() - t0)
            rows[p.id] = row
            log(f"{p.id}: {json.dumps(row)}")
    searched = [r for r in rows.values() if r.get("finished")]
    with_correct = [r for r in searched if r.get("correct_triton", 0) > 0]
    over_eager = [r["best_speedup"] for r in with_correct if r.get("best_speedup")]
    over_compile = [r["best_speedup"] / r["compile"]["speedup_over_eager"] for r in with_correct
                    if r.get("best_speedup") and r.get("compile", {}).get("speedup_over_eager")]
    bin8 = [v for per_fc in idf.values() for v in per_fc.values()]
    return {
        "benchmark": "byo_bench", "gpu": hw_key, "date": now_iso(), "commit": commit(),
        "metrics": {
            "problems": len(problems), "searched": len(searched),
            "with_correct_triton_candidate": len(with_correct),
            "best_over_eager_median": _median(over_eager),
            "best_over_compile_median": _median(over_compile),
            "identity_bin8_conf_max": max(bin8) if bin8 else None,
            "identity_bin8_conf_max_by_forecaster": {k: max(v.values()) for k, v in idf.items() if v},
        },
        "definitions": {
            "searched": f"searches of budget {args.budget} that ran to their end within the "
                        f"{args.time_budget_s:.0f} s budget (a problem without seeds counts, with none correct)",
            "with_correct_triton_candidate": "searched problems with at least one correct Triton candidate",
            "best_over_eager_median": "median over those of the best measured speedup over the eager reference",
            "best_over_compile_median": f"the same divided by torch.compile's speedup over eager "
                                        f"(mode {args.compile_mode}, timed in this run)",
            "identity_bin8_conf_max": "largest bin-8 (> 4x) probability given to the reference itself "
                                      "as a candidate, over problems and forecasters",
        },
        "settings": {"budget": args.budget, "method": "screen_topk", "search_forecaster": search_fc.name,
                     "seed": args.seed, "time_budget_s": args.time_budget_s, "cpu": args.cpu},
        "per_problem": rows,
        "identity_bin8": idf,
        "wall_s": round(time.time() - t_start, 1),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--budget", type=int, default=32, help="GPU measurements per search (default 32)")
    ap.add_argument("--time-budget-s", type=float, default=420.0,
                    help="no new search starts when the expected end passes this (default 420)")
    ap.add_argument("--forecaster", choices=("learned", "roofline"), default="learned",
                    help="the searches' forecaster (default learned; roofline when no data)")
    ap.add_argument("--no-learned", action="store_true", help="skip fitting the learned forecaster")
    ap.add_argument("--data", type=Path, default=None, help="shipped-layout data (default kernels_cache/shipped)")
    ap.add_argument("--compile-mode", default="default", help="torch.compile mode of the baseline")
    ap.add_argument("--gpu-index", type=int, default=0)
    ap.add_argument("--workers", type=int, default=None,
                    help="candidate workers (default: the executor's; compile and check run in "
                    "parallel, GPU timing is serialised)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--limit", type=int, default=0, help="only the first N corpus problems")
    ap.add_argument("--cpu", action="store_true",
                    help="smoke run on the CPU (Triton interpreter); prints, never writes a result file")
    ap.add_argument("--out", default=None, help="also write the results file here (e.g. $OUT)")
    args = ap.parse_args(argv)
    doc = run(args)
    text = json.dumps(doc, indent=2, sort_keys=False) + "\n"
    if args.cpu:
        print(text)
        return 0
    name = f"byo-{doc['gpu']}.json"
    full = not args.limit and args.corpus == CORPUS
    for p in write_results(RESULTS, name, text, full, args.out,
                           "partial run (--limit or another --corpus): no results file written"):
        print(f"wrote {p}", file=sys.stderr)
    print(json.dumps(doc["metrics"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
