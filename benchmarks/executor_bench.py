"""Executor benchmark for a GPU machine: throughput, timing agreement, guard accuracy, faults.

    PYTHONPATH=. python benchmarks/executor_bench.py [--gpu 0] [--workers 12]
    PYTHONPATH=. python benchmarks/executor_bench.py --cpu --out DIR   # CPU smoke run (tests)

Stages, in this order (each timed; the whole run is meant to take under 8 minutes on an H100
with 16 cores; a stage that would start after `--budget-s` is skipped and says so):
1. `--triton` (64) distinct Triton zoo candidates with empty caches (cold), then again with a
   new executor (warm: Triton's cache is filled; every chunk is a fresh worker process) ->
   candidates per minute each way. Each candidate is so measured in two different worker
   processes: the median over candidates of the relative difference of its time between
   them is the cross-process agreement.
2. `--repeat-candidates` (16) of those, each timed `--repeats` (5) times in one worker (the
   full adaptive timing each time, under the GPU's exclusive lock each time, while other
   workers check their candidates): the coefficient of variation of the reported median over
   the repeats, median over candidates, is the timing noise (see DEFINITIONS).
3. Every cheat fixture of tests/execution/fixtures/cheats -> caught / total; honest fixtures
   and the zoo candidates of stage 1 flagged cheat_suspected -> count.
4. CUDA C++ (load_inline) zoo candidates with an empty extension cache -> per minute, cold.
5. The 100-candidate fault batch of tests/execution/test_gpu_faults.py -> records lost.

Writes benchmarks/results/executor-<gpu>.json and, when $OUT is set, $OUT/executor-<gpu>.json
(`--out DIR` writes DIR/executor-<key>.json instead; `--cpu` requires it).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "execution"))

from exec_fixtures import fault_batch, load_fixtures  # noqa: E402

from workbench.execution.executors import ChunkedExecutor, LocalGPUExecutor  # noqa: E402
from workbench.execution.hardware import cpu_hardware  # noqa: E402
from workbench.problems import get_problem  # noqa: E402
from workbench.records import Status  # noqa: E402
from workbench.zoo import zoo_kernels  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import commit  # noqa: E402

DEFINITIONS = {
    "triton_per_min_cold": "Triton zoo candidates measured (compiled, checked, timed) per minute of wall "
                           "time, all submitted at once to a new executor with empty Triton caches",
    "triton_per_min_warm": "the same with Triton's cache filled by the cold pass (new executor, new workers)",
    "cuda_per_min_cold": "CUDA C++ (load_inline) zoo candidates per minute, empty extension cache",
    "cross_process_diff_pct_median": "per candidate ok in both passes: 100 * |t_cold - t_warm| / mean(t_cold, "
                                     "t_warm) of the reported candidate median time, measured in two different "
                                     "worker processes; median over candidates",
    "timing_cv_pct_median": "per candidate: coefficient of variation (sample std / mean, percent) of the "
                            "reported candidate median time over R repeated timings in the same worker; "
                            "median over candidates. The per-run CV (spread of single runs within one "
                            "timing, dominated by launch jitter for microsecond kernels) is "
                            "details.per_run_cv_pct_median",
    "cheats_caught": "cheat fixtures whose status is not ok",
    "honest_flagged": "honest fixtures plus cold-pass zoo candidates with status cheat_suspected",
    "fault_batch_lost": "candidates of the 100-candidate fault batch without a Measurement",
}


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def measure_all(ex, jobs):
    """jobs: [(problem, candidate)], submitted one by one as a search loop does ->
    (measurements in order, seconds until the last one)."""
    t0 = time.time()
    futures = [ex.submit(p, [c])[0] for p, c in jobs]
    out = [f.result() for f in futures]
    return out, time.time() - t0


def zoo_jobs(cuda: bool, limit: int):
    kernels = [k for k in zoo_kernels() if (k.backend == "cuda") == cuda][:limit]
    return [(get_problem(k.problem_id), k.candidate()) for k in kernels]


def per_run_cv(m) -> float | None:
    """The candidate's per-run CV (percent) from an ok Measurement's reason."""
    hit = re.search(r"candidate ([0-9.]+)%", m.reason or "")
    return float(hit.group(1)) if hit else None


def relative_diff_pct(a: float, b: float) -> float:
    """100 * |a - b| / mean(a, b)."""
    return 100 * abs(a - b) / ((a + b) / 2)


def cv_pct(values) -> float:
    """Sample coefficient of variation of `values`, percent."""
    return 100 * statistics.stdev(values) / statistics.fmean(values)


def cross_process_diffs(first, second) -> dict[str, list[float]]:
    """Relative differences (percent) of candidate time and speedup between two passes over the
    same candidates, for those ok in both."""
    pairs = [(a, b) for a, b in zip(first, second) if a.ok and b.ok]
    return {"candidate_ms": [relative_diff_pct(a.candidate_ms, b.candidate_ms) for a, b in pairs],
            "speedup": [relative_diff_pct(a.speedup, b.speedup) for a, b in pairs]}


def repeat_cvs(repeats: dict[str, list[dict]]) -> dict[str, list[float]]:
    """Per candidate with >= 2 repeats: CV (percent) over repeats of the reported candidate and
    reference medians and of their ratio (the speedup)."""
    out: dict[str, list[float]] = {"candidate_ms": [], "reference_ms": [], "speedup": []}
    for reps in repeats.values():
        if len(reps) < 2:
            continue
        cand = [r["candidate"]["median_ms"] for r in reps]
        ref = [r["reference"]["median_ms"] for r in reps]
        out["candidate_ms"].append(cv_pct(cand))
        out["reference_ms"].append(cv_pct(ref))
        out["speedup"].append(cv_pct([a / b for a, b in zip(ref, cand)]))
    return out


def med(xs, nd: int = 2):
    return round(statistics.median(xs), nd) if xs else None


def _counts(ms) -> dict:
    out: dict = {}
    for m in ms:
        out[m.status.value] = out.get(m.status.value, 0) + 1
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpu", type=int, default=0)
    ap.add_argument("--cpu", action="store_true", help="smoke run on the CPU (Triton interpreter); needs --out")
    ap.add_argument("--workers", type=int, default=12)
    ap.add_argument("--triton", type=int, default=64, help="number of Triton candidates (default 64)")
    ap.add_argument("--cuda", type=int, default=6, help="number of CUDA C++ candidates (default 6)")
    ap.add_argument("--repeat-candidates", type=int, default=16, help="candidates timed repeatedly (default 16)")
    ap.add_argument("--repeats", type=int, default=5, help="timings per repeated candidate (default 5)")
    ap.add_argument("--skip-fixtures", action="store_true")
    ap.add_argument("--skip-faults", action="store_true")
    ap.add_argument("--budget-s", type=float, default=360.0,
                    help="start no stage after this many seconds (default 360: the last stage, faults, takes ~2 min)")
    ap.add_argument("--out", type=Path, default=None, help="write the JSON here (not benchmarks/results)")
    args = ap.parse_args(argv)
    if args.cpu and args.out is None:
        ap.error("--cpu needs --out (CPU numbers never go to benchmarks/results)")
    t_start = time.time()
    metrics: dict = {}
    details: dict = {"stage_seconds": {}, "skipped": []}
    cache = Path(tempfile.mkdtemp(prefix="wb_bench_cache_"))

    def mk(timeout_s: float, run_timeout_s: float = 120.0, **kw):
        if args.cpu:
            cpu_opts = {"seeds": [0, 1], "cpu_timing": {"max_total_ms": 100, "max_runs": 5}, **kw.pop("options", {})}
            return ChunkedExecutor(cpu_hardware(), device="cpu", workers=min(args.workers, 2), timeout_s=timeout_s,
                                   run_timeout_s=run_timeout_s, cache_root=cache, options=cpu_opts, **kw)
        return LocalGPUExecutor(gpus=[args.gpu], workers=args.workers, timeout_s=timeout_s,
                                run_timeout_s=run_timeout_s, cache_root=cache, **kw)

    def stage(name: str) -> bool:
        if time.time() - t_start > args.budget_s:
            details["skipped"].append(f"{name}: not started, the {args.budget_s:.0f} s budget was spent")
            log(f"skipping {name} (budget)")
            return False
        return True

    # 1. Triton, cold and warm.
    jobs = zoo_jobs(cuda=False, limit=args.triton)
    with mk(timeout_s=180) as ex:
        hw = ex.hardware
        log(f"{hw.name}: {len(jobs)} Triton candidates, cold")
        cold, s_cold = measure_all(ex, jobs)
    with mk(timeout_s=180) as ex:
        log("same candidates, warm")
        warm, s_warm = measure_all(ex, jobs)
    details["stage_seconds"].update(triton_cold=round(s_cold, 1), triton_warm=round(s_warm, 1))
    metrics["triton_per_min_cold"] = round(60 * len(jobs) / s_cold, 1)
    metrics["triton_per_min_warm"] = round(60 * len(jobs) / s_warm, 1)
    diffs = cross_process_diffs(cold, warm)
    metrics["cross_process_diff_pct_median"] = med(diffs["candidate_ms"])
    details["cross_process"] = {"pairs": len(diffs["candidate_ms"]),
                                "speedup_diff_pct_median": med(diffs["speedup"]),
                                "candidate_diff_pct_p90": (round(sorted(diffs["candidate_ms"])[
                                    int(0.9 * (len(diffs["candidate_ms"]) - 1))], 2) if diffs["candidate_ms"] else None)}
    details["per_run_cv_pct_median"] = med([cv for m in cold + warm if m.ok for cv in [per_run_cv(m)]
                                            if cv is not None])
    details["triton_status_cold"] = _counts(cold)
    details["triton_status_warm"] = _counts(warm)
    details["triton_not_ok"] = [(c.origin, p.id, m.status.value, m.reason[:300])
                                for (p, c), m in zip(jobs, cold) if not m.ok]

    # 2. Repeated timings in one worker.
    metrics["timing_cv_pct_median"] = None
    if args.repeat_candidates > 0 and stage("repeats"):
        picked = [(p, c) for (p, c), a, b in zip(jobs, cold, warm) if a.ok and b.ok][:args.repeat_candidates]
        repeats: dict[str, list[dict]] = {}
        t0 = time.time()
        with mk(timeout_s=180, options={"timing_repeats": args.repeats},
                on_raw=lambda c, res: repeats.__setitem__(c.id, res.get("repeats", []))) as ex:
            log(f"{len(picked)} candidates timed {args.repeats} times each")
            rm, _ = measure_all(ex, picked)
        details["stage_seconds"]["repeats"] = round(time.time() - t0, 1)
        cvs = repeat_cvs(repeats)
        metrics["timing_cv_pct_median"] = med(cvs["candidate_ms"])
        details["repeat_cv"] = {"candidates": len(cvs["candidate_ms"]), "repeats": args.repeats,
                                "reference_ms_cv_pct_median": med(cvs["reference_ms"]),
                                "speedup_cv_pct_median": med(cvs["speedup"]),
                                "candidate_ms_cv_pct_max": round(max(cvs["candidate_ms"]), 2) if cvs["candidate_ms"] else None,
                                "status": _counts(rm)}

    # 3. Cheats and honest fixtures.
    metrics.update(cheats_caught=None, cheats_total=None, honest_flagged=None)
    if not args.skip_fixtures and stage("fixtures"):
        cheats, honest = load_fixtures("cheats"), load_fixtures("honest")
        t0 = time.time()
        with mk(timeout_s=120) as ex:
            log(f"{len(cheats)} cheats and {len(honest)} honest fixtures")
            cm, _ = measure_all(ex, [(f.problem, f.candidate) for f in cheats])
            hm, _ = measure_all(ex, [(f.problem, f.candidate) for f in honest])
        details["stage_seconds"]["fixtures"] = round(time.time() - t0, 1)
        metrics["cheats_caught"] = sum(not m.ok for m in cm)
        metrics["cheats_total"] = len(cm)
        details["cheats"] = {f.name: [m.status.value, m.reason[:200]] for f, m in zip(cheats, cm)}
        metrics["honest_flagged"] = sum(m.status is Status.CHEAT_SUSPECTED for m in list(cold) + hm)
        details["honest_fixtures"] = {f.name: [m.status.value, m.reason[:200]] for f, m in zip(honest, hm)}

    # 4. CUDA C++, cold.
    metrics["cuda_per_min_cold"] = None
    cjobs = zoo_jobs(cuda=True, limit=args.cuda)
    if cjobs and not args.cpu and stage("cuda"):
        with mk(timeout_s=300) as ex:
            log(f"{len(cjobs)} CUDA C++ candidates, cold")
            cres, s_cuda = measure_all(ex, cjobs)
        details["stage_seconds"]["cuda"] = round(s_cuda, 1)
        metrics["cuda_per_min_cold"] = round(60 * len(cjobs) / s_cuda, 2)
        details["cuda_status"] = _counts(cres)
        details["cuda_not_ok"] = [(c.origin, m.status.value, m.reason[:300]) for (_, c), m in zip(cjobs, cres)
                                  if not m.ok]

    # 5. Faults.
    metrics["fault_batch_lost"] = None
    if not args.skip_faults and not args.cpu and stage("faults"):
        problem, fjobs = fault_batch()
        with mk(timeout_s=30, run_timeout_s=60) as ex:
            log("fault batch: 100 candidates, 20 faulty")
            fm, s_f = measure_all(ex, [(problem, c) for c, _ in fjobs])
            alive = ex.measure(problem, [fjobs[0][0]])[0].status.value
        got = {m.candidate_id for m in fm}
        metrics["fault_batch_lost"] = sum(c.id not in got for c, _ in fjobs)
        details["fault_batch_wrong_status"] = [(c.origin, m.status.value, m.reason[:160]) for (c, exp), m
                                               in zip(fjobs, fm) if m.status.value not in exp]
        details["stage_seconds"]["faults"] = round(s_f, 1)
        details["executor_alive_after_faults"] = alive

    details["seconds_total"] = round(time.time() - t_start, 1)
    result = {"benchmark": "executor", "gpu": hw.name, "hardware": hw.to_dict(),
              "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "commit": commit(),
              "executor": "chunk workers (several candidates per worker process), timed regions exclusive "
                          "on the GPU, reference and candidate interleaved",
              "definitions": DEFINITIONS, "metrics": metrics, "details": details}
    text = json.dumps(result, indent=2)
    name = f"executor-{hw.key}.json"
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        dest = args.out / name
    else:
        dest = ROOT / "benchmarks" / "results" / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        if os.environ.get("OUT"):
            Path(os.environ["OUT"], name).write_text(text + "\n")
    dest.write_text(text + "\n")
    print(json.dumps(metrics, indent=2))
    log(f"done in {details['seconds_total']} s -> {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
