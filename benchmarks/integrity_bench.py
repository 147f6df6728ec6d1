"""Integrity benchmark for a GPU machine: attacks caught or contained, honest kernels untouched,
throughput against the previous executor.

    PYTHONPATH=. python benchmarks/integrity_bench.py --stage probes --out $OUT
    PYTHONPATH=. python benchmarks/integrity_bench.py --stage throughput --before DIR --out $OUT
    PYTHONPATH=. python benchmarks/integrity_bench.py --stage zoo [--shard 0/2] --out $OUT
    python benchmarks/integrity_bench.py --merge PARTS_DIR...   # -> benchmarks/results/integrity-<gpu>.json

Stages (each writes OUT/integrity-<stage>[-<shard>].json as it goes):
- probes: every adversarial probe of tests/execution/adversarial and every cheat fixture of
  tests/execution/fixtures/cheats through the hardened executor; a probe counts as caught or
  contained when its status is not ok and none of the probes' side effects happened (a file
  written outside the work dir, rows deleted from an SQLite file, a connection to a loopback
  listener, a marked process left running).
- throughput: the executor benchmark's batch (the first `--triton` Triton zoo files), cold
  (empty Triton cache, new executor), through the hardened executor and, in a subprocess
  whose PYTHONPATH starts with `--before` (a checkout of the previous executor), through the
  previous one; candidates per minute each, in the same run.
- zoo: every zoo kernel (Triton and CUDA C++) through the hardened executor: honest_flagged
  counts cheat_suspected, reference_check_false_flags those flagged by the clean-reference
  check.
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

DEFINITIONS = {
    "probes_total": "adversarial probes (tests/execution/adversarial/fixtures plus an oversized source) and "
                    "cheat fixtures (tests/execution/fixtures/cheats)",
    "probes_caught_or_contained": "probes whose status is not ok, with none of the probes' side effects seen",
    "honest_total": "zoo kernels (Triton and CUDA C++) measured by the hardened executor",
    "honest_flagged": "zoo kernels with status cheat_suspected",
    "reference_check_false_flags": "zoo kernels flagged because the reference beside them was slower than the "
                                   "same reference timed alone in the clean process",
    "triton_per_min_cold": "the executor benchmark's Triton batch, candidates per minute, empty Triton cache, "
                           "hardened executor",
    "triton_per_min_cold_before": "the same batch through the previous executor, same machine, same run",
    "throughput_ratio": "triton_per_min_cold / triton_per_min_cold_before",
}


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
    CPU: the chunked worker path that LocalGPUExecutor runs (CPUExecutor, the cpu target's
    executor, measures through another path)."""
    if os.environ.get("WB_INTEGRITY_CPU"):   # smoke runs of this script on a machine without a GPU
        from workbench.execution.executors import ChunkedExecutor
        from workbench.execution.hardware import cpu_hardware

        return ChunkedExecutor(cpu_hardware(), device="cpu", workers=2, timeout_s=timeout_s, cache_root=cache,
                               options={"seeds": [0, 1], "cpu_timing": {"max_total_ms": 100, "max_runs": 5}})
    from workbench.compose import make_executor
    from workbench.spec import Target

    return make_executor(Target("cuda", index=GPU), workers=workers, timeout_s=timeout_s, cache_root=cache)


def stage_probes(args) -> dict:
    from exec_fixtures import load_fixtures
    from probes import SECRET, Probes, contained

    tmp = Path(tempfile.mkdtemp(prefix="wb_probes_"))
    probes = Probes(tmp)
    jobs = [(name, probes.problem, c) for name, c in probes.candidates.items()]
    jobs += [(f"cheat:{f.name}", f.problem, f.candidate) for f in load_fixtures("cheats")]
    os.environ["WB_ADVERSARIAL_SECRET"] = SECRET
    t0 = time.time()
    with _executor(args.workers, tmp / "cache", timeout_s=60) as ex:
        futures = [(name, ex.submit(p, [c])[0]) for name, p, c in jobs]
        results = {name: f.result() for name, f in futures}
        hw = ex.hardware
    os.environ.pop("WB_ADVERSARIAL_SECRET", None)
    time.sleep(1.0)
    side = probes.side_effects()
    ok_side = contained(side)
    rows = {n: {"status": m.status.value, "reason": m.reason[:300]} for n, m in results.items()}
    caught = sum(1 for m in results.values() if m.status.value != "ok") if ok_side else 0
    leaked = [n for n, m in results.items() if SECRET in (m.reason + m.log)]
    return {"hardware": hw.to_dict(), "seconds": round(time.time() - t0, 1),
            "metrics": {"probes_total": len(results), "probes_caught_or_contained": caught - len(leaked)},
            "details": {"side_effects": side, "secret_leaked_by": leaked, "probes": rows}}


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


def stage_zoo(args) -> dict:
    from workbench.problems import get_problem
    from workbench.zoo import zoo_kernels

    kernels = [z for z in zoo_kernels() if args.only in z.name]
    k, n = (int(x) for x in args.shard.split("/"))
    kernels = kernels[k::n]
    jobs = [(z.name, get_problem(z.problem_id), z.candidate()) for z in kernels]
    cache = Path(tempfile.mkdtemp(prefix="wb_zoo_cache_"))
    t0 = time.time()
    rows = {}
    with _executor(args.workers, cache, timeout_s=300) as ex:
        futures = [(f, ex.submit(p, [c])[0]) for f, p, c in jobs]
        for i, (f, fut) in enumerate(futures):
            m = fut.result()
            rows[f] = {"status": m.status.value, "reason": m.reason[:300],
                                              "speedup": m.speedup}
            if args.out is not None and i % 50 == 49:   # what is known so far, should the call be cut off
                _write(args.out, f"partial-zoo-{args.shard.replace('/', 'of')}.json",
                       {"done": len(rows), "of": len(jobs), "rows": rows})
    flagged = {k: v for k, v in rows.items() if v["status"] == "cheat_suspected"}
    counts: dict = {}
    for v in rows.values():
        counts[v["status"]] = counts.get(v["status"], 0) + 1
    return {"seconds": round(time.time() - t0, 1),
            "metrics": {"honest_total": len(rows), "honest_flagged": len(flagged),
                        "reference_check_false_flags": sum("clean process" in v["reason"] for v in flagged.values())},
            "details": {"statuses": counts, "flagged": flagged,
                        "not_ok": {k: v for k, v in rows.items() if v["status"] != "ok"}}}


def merge(dirs: list[Path]) -> Path:
    from _common import commit

    from workbench.execution import contain

    parts = [json.loads(p.read_text()) for d in dirs for p in sorted(d.glob("integrity-*.json"))]
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
            metrics[k] = metrics.get(k, 0) + v if k in ("honest_total", "honest_flagged",
                                                         "reference_check_false_flags") else v
        details[p["part"]] = {k: v for k, v in p.items() if k not in ("metrics", "hardware")}
    out = {"benchmark": "integrity", "gpu": hw["name"], "hardware": hw,
           "date": min(p["date"] for p in parts), "commit": parts[0]["commit"], "definitions": DEFINITIONS,
           "containment": parts[0].get("containment") or contain.describe(), "metrics": metrics,
           "details": details, "merged_by": commit()}
    path = ROOT / "benchmarks" / "results" / f"integrity-{hw['key']}.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    return path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stage", choices=["probes", "throughput", "zoo", "per-min"])
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--workers", type=int, default=12)
    ap.add_argument("--triton", type=int, default=64)
    ap.add_argument("--before", type=Path, default=None, help="checkout of the previous executor (throughput)")
    ap.add_argument("--order", default="before,after,after,before")
    ap.add_argument("--shard", default="0/1")
    ap.add_argument("--only", default="", help="zoo stage: only variants whose name (L3/10_moe_top1_bf16/<variant>) contains this")
    ap.add_argument("--gpu", type=int, default=0, help="CUDA device index (zoo shards may run side by side)")
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
    from _common import commit

    from workbench.execution import contain

    fn = {"probes": stage_probes, "throughput": stage_throughput, "zoo": stage_zoo}[args.stage]
    if args.stage == "throughput" and args.before is None:
        ap.error("--before is required for the throughput stage")
    part = f"{args.stage}" + (f"-{args.shard.replace('/', 'of')}" if args.stage == "zoo" else "")
    if args.only:
        part += "-only-" + "".join(ch if ch.isalnum() else "_" for ch in args.only)
    res = fn(args)
    res.update(part=part, date=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), commit=commit(),
               containment=contain.describe())
    _write(args.out, f"integrity-{part}.json", res)
    log(json.dumps(res["metrics"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
