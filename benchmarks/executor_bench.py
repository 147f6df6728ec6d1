"""Executor benchmark for a GPU machine: throughput, timing agreement, guard accuracy, faults.

    PYTHONPATH=. python benchmarks/executor_bench.py [--gpu 0] [--workers 12]

Stages (each timed; the whole run is meant to take under 8 minutes on an H100 with 16 cores):
1. 64 distinct Triton zoo candidates with empty caches (cold), then again (warm: Triton's
   cache is filled, workers are fresh processes) -> candidates per minute each way. The two
   passes measure each candidate in two different worker processes: the median absolute
   difference of the candidate's time between them is the cross-process agreement, and the
   median coefficient of variation of the timed runs is the timing noise.
2. CUDA C++ (load_inline) zoo candidates with an empty extension cache -> per minute, cold.
3. Every cheat fixture of tests/execution/fixtures/cheats -> caught / total.
4. Honest candidates (the zoo measured in stage 1, plus tests/execution/fixtures/honest)
   flagged as cheat_suspected -> count.
5. The 100-candidate fault batch of tests/execution/test_gpu_faults.py -> records lost.

Writes benchmarks/results/executor-<gpu>.json and, when $OUT is set, $OUT/executor-<gpu>.json.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "execution"))

from exec_fixtures import fault_batch, load_fixtures  # noqa: E402

from workbench.execution.executors import LocalGPUExecutor  # noqa: E402
from workbench.problems import get_problem  # noqa: E402
from workbench.records import Status  # noqa: E402
from workbench.zoo import zoo_files, problem_id_of  # noqa: E402


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def measure_all(ex, jobs):
    """jobs: [(problem, candidate)] -> (measurements in order, seconds)."""
    t0 = time.time()
    futures = [ex.submit(p, [c])[0] for p, c in jobs]
    out = [f.result() for f in futures]
    return out, time.time() - t0


def zoo_jobs(cuda: bool, limit: int):
    from workbench.records import Candidate

    files = [f for f in zoo_files() if f.name.startswith("cuda_") == cuda][:limit]
    return [(get_problem(problem_id_of(f)), Candidate.from_source(problem_id_of(f), f.read_text(),
                                                                  origin=f"zoo:{f.stem}")) for f in files]


def cv_of(m) -> float | None:
    hit = re.search(r"candidate ([0-9.]+)%", m.reason or "")
    return float(hit.group(1)) if hit else None


def commit() -> str:
    if os.environ.get("WORKBENCH_COMMIT"):
        return os.environ["WORKBENCH_COMMIT"]
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                             timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out if re.fullmatch(r"[0-9a-f]{40}", out) else "unknown (no git history here; set WORKBENCH_COMMIT)"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpu", type=int, default=0)
    ap.add_argument("--workers", type=int, default=12)
    ap.add_argument("--triton", type=int, default=64, help="number of Triton candidates (default 64)")
    ap.add_argument("--cuda", type=int, default=6, help="number of CUDA C++ candidates (default 6)")
    ap.add_argument("--skip-faults", action="store_true")
    args = ap.parse_args(argv)
    t_start = time.time()
    metrics: dict = {}
    details: dict = {}
    cache = Path(tempfile.mkdtemp(prefix="wb_bench_cache_"))
    mk = lambda **kw: LocalGPUExecutor(gpus=[args.gpu], workers=args.workers, cache_root=cache, **kw)  # noqa: E731

    jobs = zoo_jobs(cuda=False, limit=args.triton)
    with mk(timeout_s=180) as ex:
        hw = ex.hardware
        log(f"{hw.name}: {len(jobs)} Triton candidates, cold")
        cold, s_cold = measure_all(ex, jobs)
    with mk(timeout_s=180) as ex:
        log("same candidates, warm")
        warm, s_warm = measure_all(ex, jobs)
    metrics["triton_per_min_cold"] = round(60 * len(jobs) / s_cold, 1)
    metrics["triton_per_min_warm"] = round(60 * len(jobs) / s_warm, 1)
    diffs = [100 * abs(a.candidate_ms - b.candidate_ms) / ((a.candidate_ms + b.candidate_ms) / 2)
             for a, b in zip(cold, warm) if a.ok and b.ok]
    metrics["cross_process_diff_pct_median"] = round(statistics.median(diffs), 2) if diffs else None
    cvs = [cv for m in cold + warm if m.ok for cv in [cv_of(m)] if cv is not None]
    metrics["timing_cv_pct_median"] = round(statistics.median(cvs), 2) if cvs else None
    details["triton_status_cold"] = _counts(cold)
    details["triton_not_ok"] = [(c.origin, p.id, m.status.value, m.reason[:300])
                                for (p, c), m in zip(jobs, cold) if not m.ok]

    cjobs = zoo_jobs(cuda=True, limit=args.cuda)
    if cjobs:
        with mk(timeout_s=300) as ex:
            log(f"{len(cjobs)} CUDA C++ candidates, cold")
            cres, s_cuda = measure_all(ex, cjobs)
        metrics["cuda_per_min_cold"] = round(60 * len(cjobs) / s_cuda, 2)
        details["cuda_status"] = _counts(cres)
        details["cuda_not_ok"] = [(c.origin, m.status.value, m.reason[:300]) for (_, c), m in zip(cjobs, cres)
                                  if not m.ok]
    else:
        metrics["cuda_per_min_cold"] = None

    cheats = load_fixtures("cheats")
    honest = load_fixtures("honest")
    with mk(timeout_s=120) as ex:
        log(f"{len(cheats)} cheats and {len(honest)} honest fixtures")
        cm, _ = measure_all(ex, [(f.problem, f.candidate) for f in cheats])
        hm, _ = measure_all(ex, [(f.problem, f.candidate) for f in honest])
    metrics["cheats_caught"] = sum(not m.ok for m in cm)
    metrics["cheats_total"] = len(cm)
    details["cheats"] = {f.name: [m.status.value, m.reason[:200]] for f, m in zip(cheats, cm)}
    flagged = [m for m in list(cold) + hm if m.status is Status.CHEAT_SUSPECTED]
    metrics["honest_flagged"] = len(flagged)
    details["honest_fixtures"] = {f.name: [m.status.value, m.reason[:200]] for f, m in zip(honest, hm)}

    if not args.skip_faults:
        problem, fjobs = fault_batch()
        with mk(timeout_s=30, run_timeout_s=60) as ex:
            log("fault batch: 100 candidates, 20 faulty")
            fm, s_f = measure_all(ex, [(problem, c) for c, _ in fjobs])
            alive = ex.measure(problem, [fjobs[0][0]])[0].status.value
        got = {m.candidate_id for m in fm}
        metrics["fault_batch_lost"] = sum(c.id not in got for c, _ in fjobs)
        details["fault_batch_wrong_status"] = [(c.origin, m.status.value, m.reason[:160]) for (c, exp), m
                                               in zip(fjobs, fm) if m.status.value not in exp]
        details["fault_batch_seconds"] = round(s_f, 1)
        details["executor_alive_after_faults"] = alive
    else:
        metrics["fault_batch_lost"] = None

    details["seconds_total"] = round(time.time() - t_start, 1)
    result = {"benchmark": "executor", "gpu": hw.name, "hardware": hw.to_dict(),
              "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "commit": commit(),
              "metrics": metrics, "details": details}
    text = json.dumps(result, indent=2)
    dest = ROOT / "benchmarks" / "results" / f"executor-{hw.key}.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(text + "\n")
    if os.environ.get("OUT"):
        Path(os.environ["OUT"], dest.name).write_text(text + "\n")
    print(json.dumps(metrics, indent=2))
    log(f"done in {details['seconds_total']} s -> {dest}")
    return 0


def _counts(ms) -> dict:
    out: dict = {}
    for m in ms:
        out[m.status.value] = out.get(m.status.value, 0) + 1
    return out


if __name__ == "__main__":
    sys.exit(main())
