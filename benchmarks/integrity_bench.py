"""Integrity benchmark for a GPU machine: attacks caught or contained, secrets kept, honest
kernels untouched, throughput against the previous executor.

One H200, resumable parts of under 9 minutes each (run from the repository root; carry each
call's $OUT files into the next call's tree, e.g. under shared/integrity/):

    PYTHONPATH=. python benchmarks/integrity_bench.py --stage all --budget-s 450 --before DIR \\
        --resume shared/integrity --out $OUT          # again until it prints "all parts done"
    python benchmarks/integrity_bench.py --merge shared/integrity   # -> benchmarks/results/integrity-<gpu>.json

or one stage per call:

    --stage probes                      every adversarial probe, its honest twin, the cheat fixtures
    --stage throughput --before DIR     the previous executor (a checkout at DIR) beside this one
    --stage zoo --shard i/n             the whole zoo (Triton and CUDA C++), shard i of n
    --stage landscape                   200 landscape points (shipped H200 landscape, status ok)

Stages (each writes OUT/integrity-<part>.json; the zoo and landscape stages also write
partial-<part>.json every 25 kernels, which --resume picks up):
- probes: tests/execution/adversarial/driver.py in a process whose own environment holds the
  secrets the probes try to steal: every probe (one worker process each) and its honest twin,
  plus tests/execution/fixtures/cheats. A probe is caught when its status is not ok and one
  its EXPECT line names, contained when it is ok, EXPECT allows it and its speedup is at most
  TOL times its twin's (the attack changed nothing the verdict uses); with any side effect
  (a file written outside the work dir, rows deleted, a connection, a process left) nothing
  counts as caught.
- throughput: the executor benchmark's batch (the first `--triton` Triton zoo kernels), cold
  (empty Triton cache, new executor), through the hardened executor and, in a subprocess
  whose PYTHONPATH is `--before` (a checkout of the previous executor), through the previous
  one; candidates per minute each, in the same run.
- zoo / landscape: honest kernels through the hardened executor: honest_flagged counts
  cheat_suspected; for the landscape points the speedup beside the shipped one (measured by
  the previous executor) as a check of the new timing.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if not os.environ.get("WB_INTEGRITY_BEFORE"):   # the previous executor's child keeps its own PYTHONPATH
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "execution"))
sys.path.insert(0, str(ROOT / "tests" / "execution" / "adversarial"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

TOL = 1.25          # contained: speedup at most TOL x the honest twin's (GPU timings repeat within a few %)
LANDSCAPE_POINTS = 200
DEFINITIONS = {
    "probes_total": "adversarial probes (tests/execution/adversarial/fixtures a* and b*, plus an oversized "
                    "source) and cheat fixtures (tests/execution/fixtures/cheats)",
    "probes_caught_or_contained": "probes caught (status not ok, one their EXPECT line names) or contained (ok, "
                                  "EXPECT allows it, speedup at most TOL x the honest twin's), with none of the "
                                  "probes' side effects seen",
    "forged_accepted": "probes measured ok that were not contained (a verdict the attack changed)",
    "secrets_leaked": "probes and twins whose stored reason or log holds a secret of the process running the "
                      "executor (a key-shaped one, and a marker no scrubber knows)",
    "twins_total": "honest twins of the b* probes (the same file with the attack switched off)",
    "twins_ok": "twins measured ok",
    "honest_total": "zoo kernels (Triton and CUDA C++) and 200 landscape points measured by the hardened executor",
    "honest_flagged": "honest kernels with status cheat_suspected",
    "reference_check_false_flags": "honest kernels flagged because the reference beside them was slower than the "
                                   "same reference timed alone",
    "landscape_speedup_ratio_median": "landscape points: median of this run's speedup over the shipped one",
    "triton_per_min_cold": "the executor benchmark's Triton batch, candidates per minute, empty Triton cache, "
                           "hardened executor",
    "triton_per_min_cold_before": "the same batch through the previous executor, same machine, same run",
    "throughput_ratio": "triton_per_min_cold / triton_per_min_cold_before",
}
SUMMED = ("honest_total", "honest_flagged", "reference_check_false_flags")


def log(msg: str) -> None:
    print(f"[integrity {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _write(out: Path, name: str, obj: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / f".{name}.tmp"
    tmp.write_text(json.dumps(obj, indent=1, default=str))
    os.replace(tmp, out / name)


GPU = 0   # --gpu


def _executor(workers: int, cache: Path, timeout_s: float = 180.0):
    """GPU `GPU` through compose.make_executor. The CPU smoke run keeps a ChunkedExecutor on the
    CPU: the chunked worker path that LocalGPUExecutor runs."""
    if os.environ.get("WB_INTEGRITY_CPU"):   # smoke runs of this script on a machine without a GPU
        from workbench.execution.executors import ChunkedExecutor
        from workbench.execution.hardware import cpu_hardware

        return ChunkedExecutor(cpu_hardware(), device="cpu", workers=2, timeout_s=timeout_s, cache_root=cache,
                               options={"seeds": [0, 1], "cpu_timing": {"max_total_ms": 100, "max_runs": 5}})
    from workbench.compose import make_executor
    from workbench.spec import Target

    return make_executor(Target("cuda", index=GPU), workers=workers, timeout_s=timeout_s, cache_root=cache)


# --------------------------------------------------------------------------- probes
def stage_probes(args) -> dict:
    from probes import contained, leaked, outcome

    tmp = Path(tempfile.mkdtemp(prefix="wb_probes_"))
    out = tmp / "probes.json"
    argv = [sys.executable, str(ROOT / "tests" / "execution" / "adversarial" / "driver.py"), "--out", str(out),
            "--cheats", "--workers", str(args.workers)]
    argv += ["--cpu"] if args.cpu else ["--gpu", str(args.gpu)]
    env = dict(os.environ, PYTHONPATH=str(ROOT) + (os.pathsep + os.environ["PYTHONPATH"]
                                                   if os.environ.get("PYTHONPATH") else ""))
    p = subprocess.run(argv, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"the probes' driver failed: {p.stderr[-3000:]}")
    run = json.loads(out.read_text())
    tol = 25.0 if args.cpu else TOL
    side_ok = contained(run["side"])
    rows, outcomes = {}, {}
    for name, r in run["results"].items():
        if name.startswith("cheat:"):
            from exec_fixtures import load_fixtures

            exp = next(set(f.expect) for f in load_fixtures("cheats") if f"cheat:{f.name}" == name)
            outcomes[name] = "caught" if r["status"] != "ok" and r["status"] in exp else "failed"
        else:
            outcomes[name] = outcome(name, r, run["twins"].get(name), tol)
        rows[name] = {"status": r["status"], "reason": r["reason"][:300], "speedup": r["speedup"],
                      "twin": (run["twins"].get(name) or {}).get("speedup"), "outcome": outcomes[name],
                      "ms": {"reference": r.get("reference_ms"), "candidate": r.get("candidate_ms")}}
    good = sum(o in ("caught", "contained") for o in outcomes.values()) if side_ok else 0
    leaks = {n: leaked(r) for n, r in {**run["results"], **{f"twin:{k}": v for k, v in run["twins"].items()}}.items()
             if leaked(r)}
    return {"hardware": run["hardware"], "seconds": run["seconds"],
            "metrics": {"probes_total": len(outcomes), "probes_caught_or_contained": good,
                        "forged_accepted": sum(1 for n, o in outcomes.items()
                                               if o == "failed" and run["results"][n]["status"] == "ok"),
                        "secrets_leaked": len(leaks), "twins_total": len(run["twins"]),
                        "twins_ok": sum(1 for t in run["twins"].values() if t["status"] == "ok")},
            "details": {"side_effects": run["side"], "leaks": leaks, "probes": rows,
                        "twins": {n: {"status": t["status"], "speedup": t["speedup"], "reason": t["reason"][:200],
                                      "reference_ms": t.get("reference_ms"), "candidate_ms": t.get("candidate_ms")}
                                  for n, t in run["twins"].items()},
                        "tolerance": tol, "containment": run["containment"]}}


# --------------------------------------------------------------------------- throughput
def _batch(limit: int):
    from workbench.problems import get_problem
    from workbench.zoo import zoo_kernels

    kernels = [k for k in zoo_kernels() if k.backend != "cuda"][:limit]
    return [(get_problem(k.problem_id), k.candidate()) for k in kernels]


def _per_min(args) -> dict:
    """The throughput batch through whatever executor `workbench` resolves to here."""
    jobs = _batch(args.triton)
    cache = Path(tempfile.mkdtemp(prefix="wb_tp_cache_"))
    with _executor(args.workers, cache) as ex:
        t0 = time.time()
        futures = [ex.submit(p, [c])[0] for p, c in jobs]
        ms = [f.result() for f in futures]
        s = time.time() - t0
    counts: dict = {}
    for m in ms:
        counts[m.status.value] = counts.get(m.status.value, 0) + 1
    return {"per_min": round(60 * len(jobs) / s, 1), "seconds": round(s, 1), "n": len(jobs), "statuses": counts,
            "flags": {m.candidate_id: m.reason[:200] for m in ms if m.status.value == "cheat_suspected"}}


def stage_throughput(args) -> dict:
    """Each run of `--order` in a fresh process with its own empty Triton cache, the previous
    executor's (PYTHONPATH = `--before`) and the hardened one's (this checkout) alike; the
    default order before, after, after, before cancels a drift of the machine over the stage.
    Candidates per minute of an executor = its candidates over its seconds, summed over its runs."""
    runs: dict[str, list[dict]] = {"before": [], "after": []}
    for which in args.order.split(","):
        log(f"throughput: {which}")
        where = args.before.resolve() if which == "before" else ROOT
        env = dict(os.environ, PYTHONPATH=str(where), **({"WB_INTEGRITY_BEFORE": "1"} if which == "before" else {}))
        p = subprocess.run([sys.executable, __file__, "--stage", "per-min", "--triton", str(args.triton),
                            "--workers", str(args.workers), "--gpu", str(args.gpu)] + (["--cpu"] if args.cpu else []),
                           env=env, capture_output=True, text=True, cwd=str(where))
        if p.returncode != 0:
            raise SystemExit(f"the {which} executor's run failed: {p.stderr[-2000:]}")
        runs[which].append(json.loads(p.stdout.strip().splitlines()[-1]))
        log(f"  {runs[which][-1]['per_min']} per minute")

    def per_min(rs: list[dict]) -> float:
        return round(60 * sum(r["n"] for r in rs) / sum(r["seconds"] for r in rs), 1)

    after, before = per_min(runs["after"]), per_min(runs["before"])
    return {"metrics": {"triton_per_min_cold": after, "triton_per_min_cold_before": before,
                        "throughput_ratio": round(after / before, 3)},
            "details": {"runs": runs, "order": args.order, "workers": args.workers}}


# --------------------------------------------------------------------------- honest kernels
def _measure_honest(args, jobs: list[tuple[str, object, object]], part: str, deadline: float) -> dict:
    """Measure (name, problem, candidate) jobs, picking up rows a partial file under --resume
    holds; writes partial-<part>.json every 25 kernels. Returns {"rows", "complete"}."""
    rows: dict = {}
    for d in args.resume:
        for p in sorted(Path(d).rglob(f"partial-{part}.json")):
            rows.update(json.loads(p.read_text()).get("rows", {}))
    todo = [j for j in jobs if j[0] not in rows]
    log(f"{part}: {len(rows)} done before, {len(todo)} to measure")
    cache = Path(tempfile.mkdtemp(prefix="wb_honest_cache_"))
    complete = True
    with _executor(args.workers, cache, timeout_s=300) as ex:
        futures = [(n, ex.submit(p, [c])[0]) for n, p, c in todo]
        for i, (n, fut) in enumerate(futures):
            left = deadline - time.time()
            try:
                m = fut.result(timeout=max(left, 0.01))
            except Exception:  # noqa: BLE001 - out of time: the rest is for the next call
                complete = False
                for _, f in futures[i:]:
                    f.cancel()
                break
            rows[n] = {"status": m.status.value, "reason": m.reason[:300], "speedup": m.speedup,
                       "rounds": m.candidate_runs}
            if args.out is not None and i % 25 == 24:
                _write(args.out, f"partial-{part}.json", {"done": len(rows), "of": len(jobs), "rows": rows})
        # Written before the executor closes: closing waits for sessions in flight, which can
        # outlast the call's own time limit.
        if args.out is not None:
            _write(args.out, f"partial-{part}.json", {"done": len(rows), "of": len(jobs), "rows": rows})
    return {"rows": rows, "complete": complete and len(rows) >= len(jobs)}


def _honest_part(rows: dict, seconds: float) -> dict:
    flagged = {k: v for k, v in rows.items() if v["status"] == "cheat_suspected"}
    counts: dict = {}
    for v in rows.values():
        counts[v["status"]] = counts.get(v["status"], 0) + 1
    return {"seconds": round(seconds, 1),
            "metrics": {"honest_total": len(rows), "honest_flagged": len(flagged),
                        "reference_check_false_flags": sum("slowed the reference" in v["reason"]
                                                           or "left running" in v["reason"] for v in flagged.values())},
            "details": {"statuses": counts, "flagged": flagged,
                        "not_ok": {k: v for k, v in rows.items() if v["status"] != "ok"}}}


def stage_zoo(args, deadline: float) -> dict | None:
    from workbench.problems import get_problem
    from workbench.zoo import zoo_kernels

    kernels = [z for z in zoo_kernels() if args.only in z.name]
    k, n = (int(x) for x in args.shard.split("/"))
    jobs = [(z.name, get_problem(z.problem_id), z.candidate()) for z in kernels[k::n]]
    t0 = time.time()
    got = _measure_honest(args, jobs, _part("zoo", args), deadline)
    return _honest_part(got["rows"], time.time() - t0) if got["complete"] else None


def landscape_points(n: int = LANDSCAPE_POINTS) -> list[dict]:
    """`n` points of the shipped H200 landscapes measured ok there, about as many per problem,
    chosen with a fixed seed: (name, problem id, source, shipped speedup)."""
    import random

    import pyarrow.parquet as pq

    t = pq.read_table(ROOT / "kernels_cache" / "landscapes" / "h200" / "kernels.parquet",
                      columns=["problem_id", "candidate_id", "candidate_source", "status", "speedup"]).to_pylist()
    by: dict[str, list[dict]] = {}
    for r in t:
        if r["status"] == "ok":
            by.setdefault(r["problem_id"], []).append(r)
    rng = random.Random(48)
    for v in by.values():
        v.sort(key=lambda r: r["candidate_id"])
        rng.shuffle(v)
    picked: list[dict] = []
    while len(picked) < n and any(by.values()):
        for pid in sorted(by):
            if by[pid] and len(picked) < n:
                picked.append(by[pid].pop())
    return picked


def stage_landscape(args, deadline: float) -> dict | None:
    import math
    import statistics

    from workbench.problems import get_problem
    from workbench.records import Candidate

    pts = landscape_points()
    jobs = [(f"{r['problem_id']}/{r['candidate_id']}", get_problem(r["problem_id"]),
             Candidate.from_source(r["problem_id"], r["candidate_source"], origin="landscape")) for r in pts]
    t0 = time.time()
    got = _measure_honest(args, jobs, "landscape", deadline)
    if not got["complete"]:
        return None
    part = _honest_part(got["rows"], time.time() - t0)
    shipped = {f"{r['problem_id']}/{r['candidate_id']}": r["speedup"] for r in pts}
    ratios = [v["speedup"] / shipped[k] for k, v in got["rows"].items() if v["speedup"] and shipped.get(k)]
    if ratios:
        part["metrics"]["landscape_speedup_ratio_median"] = round(statistics.median(ratios), 3)
        part["details"]["landscape_within_10pct"] = round(sum(abs(math.log(r)) < math.log(1.1) for r in ratios)
                                                          / len(ratios), 3)
    return part


# --------------------------------------------------------------------------- parts
def _part(stage: str, args) -> str:
    part = stage + (f"-{args.shard.replace('/', 'of')}" if stage == "zoo" else "")
    if stage == "zoo" and args.only:
        part += "-only-" + "".join(ch if ch.isalnum() else "_" for ch in args.only)
    return part


def _done_parts(dirs: list[Path]) -> set[str]:
    return {json.loads(p.read_text())["part"] for d in dirs for p in Path(d).rglob("integrity-*.json")}


def run_stage(stage: str, args, deadline: float) -> bool:
    """Run one stage; write its part. Returns whether it finished (False: out of time)."""
    from _common import commit

    from workbench.execution import contain

    if stage == "probes":
        res = stage_probes(args)
    elif stage == "throughput":
        if args.before is None:
            raise SystemExit("--before is required for the throughput stage")
        res = stage_throughput(args)
    elif stage == "zoo":
        res = stage_zoo(args, deadline)
    else:
        res = stage_landscape(args, deadline)
    if res is None:
        return False
    res.update(part=_part(stage, args), date=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), commit=commit(),
               containment=contain.describe())
    _write(args.out, f"integrity-{res['part']}.json", res)
    log(f"{res['part']}: {json.dumps(res['metrics'])}")
    return True


#: `--stage all`: the parts in the order they run, with a rough device time each (s), so a
#: call does not start a part it cannot finish in its budget (zoo and landscape resume anyway).
ALL = [("probes", None, 240), ("throughput", None, 300), ("zoo", "0/3", 60), ("zoo", "1/3", 60),
       ("zoo", "2/3", 60), ("landscape", None, 60)]


def stage_all(args) -> int:
    start = time.time()
    done = _done_parts(args.resume) | _done_parts([args.out])
    for stage, shard, need_s in ALL:
        if shard:
            args.shard = shard
        part = _part(stage, args)
        if part in done:
            continue
        left = args.budget_s - (time.time() - start)
        if left < need_s:
            log(f"{part}: not started ({left:.0f} s left of the budget); run again with --resume")
            return 0
        log(f"{part}: running")
        if not run_stage(stage, args, start + args.budget_s):
            log(f"{part}: stopped at the budget; run again with --resume")
            return 0
    log("all parts done")
    return 0


def merge(dirs: list[Path], results: Path | None = None) -> Path:
    """The parts under `dirs` merged into `results`/integrity-<gpu>.json (default
    benchmarks/results); refused when they come from more than one commit."""
    from _common import commit

    from workbench.execution import contain

    parts = {}
    for d in dirs:
        for p in sorted(d.rglob("integrity-*.json")):
            obj = json.loads(p.read_text())
            parts[obj["part"]] = obj          # a part run twice: the later file (sorted) stands
    parts = list(parts.values())
    commits = sorted({p["commit"] for p in parts})
    if len(commits) > 1:
        raise SystemExit(f"parts from {len(commits)} commits ({', '.join(c[:10] for c in commits)}): every part of "
                         "one results file comes from one version of the judge; run the others again")
    metrics: dict = {}
    details: dict = {}
    hw = next((p["hardware"] for p in parts if p.get("hardware")), None)
    if hw is None:
        raise SystemExit("no part carries the hardware record (run the probes stage)")
    for p in parts:
        if "-only-" in p["part"]:   # a supplementary run over part of the zoo: details, not totals
            details[p["part"]] = {k: v for k, v in p.items() if k != "hardware"}
            continue
        for k, v in p["metrics"].items():
            metrics[k] = metrics.get(k, 0) + v if k in SUMMED else v
        details[p["part"]] = {k: v for k, v in p.items() if k not in ("metrics", "hardware")}
    out = {"benchmark": "integrity", "gpu": hw["name"], "hardware": hw,
           "date": min(p["date"] for p in parts), "commit": parts[0]["commit"], "definitions": DEFINITIONS,
           "containment": parts[0].get("containment") or contain.describe(), "metrics": metrics,
           "details": details, "merged_by": commit()}
    results = results or ROOT / "benchmarks" / "results"
    results.mkdir(parents=True, exist_ok=True)
    path = results / f"integrity-{hw['key']}.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    return path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stage", choices=["all", "probes", "throughput", "zoo", "landscape", "per-min"])
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--workers", type=int, default=12)
    ap.add_argument("--triton", type=int, default=64)
    ap.add_argument("--before", type=Path, default=None, help="checkout of the previous executor (throughput)")
    ap.add_argument("--order", default="before,after,after,before")
    ap.add_argument("--shard", default="0/1")
    ap.add_argument("--only", default="", help="zoo stage: only variants whose name (L3/10_moe_top1_bf16/<variant>) contains this")
    ap.add_argument("--gpu", type=int, default=0, help="CUDA device index (zoo shards may run side by side)")
    ap.add_argument("--budget-s", type=float, default=450.0, help="stage all, zoo, landscape: seconds for this call")
    ap.add_argument("--resume", type=Path, nargs="*", default=[], help="directories holding earlier calls' files")
    ap.add_argument("--merge", type=Path, nargs="*", default=None)
    ap.add_argument("--cpu", action="store_true", help="smoke run on the CPU interpreter (never for results)")
    args = ap.parse_args(argv)
    if args.cpu:
        os.environ["WB_INTEGRITY_CPU"] = "1"
    global GPU
    GPU = args.gpu
    if args.merge is not None:
        print(merge(args.merge))
        return 0
    if args.stage == "per-min":   # the child of the throughput stage (maybe the previous executor's code)
        print(json.dumps(_per_min(args)))
        return 0
    if args.out is None:
        ap.error("--out is required")
    if args.stage == "all":
        return stage_all(args)
    run_stage(args.stage, args, time.time() + args.budget_s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
