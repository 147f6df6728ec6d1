"""A forecaster inside Triton's autotuner (issue 30 item 7): autotune time saved and the final
kernel's speed, against full autotuning, with random pruning as the control.

Problems: the single-layer matmul landscapes, whose family points with algo=tiled, split=1 and
epilogue=fused differ only in launch configs (BM, BN, BK, GROUP, num_warps, num_stages:
`workbench.landscape.autotune.matmul_tiled_map`). The other families' launch-config subspaces
(block, rows, warps, stages at a fixed algorithm) would need autotunable versions of their
templates and are not run here. For each problem, --configs family points (a seeded sample, the
same for every arm) become `triton.Config`s of one autotunable kernel: the family's tiled matmul
core (grouped tile order, fp32 accumulation, IEEE dot for fp32 problems) at the problem's first
layer shape and dtype, without its epilogue. Three arms, each on a fresh kernel object and a
fresh, empty TRITON_CACHE_DIR (cold: every config compiles):
  full     every config benchmarked by the autotuner;
  pruned   prune_configs_by={"perf_model": ForecastPerfModel, "top_k": --top-k};
  random   the same with RandomPerfModel (a uniformly random top k): the control.
autotune_s is the wall time of the first call (pruning, compiling and benchmarking); the chosen
kernel's time is then measured with triton.testing.do_bench on the tuned kernel, the same way
for every arm.

The forecaster (--forecaster learned, default settings) is fitted ONCE on the shipped library
rows of the GPU (kernels_cache/shipped) without any row of the problems being tuned: a protocol
whose held-out list is the tuned problems guards the fit (HeldOutLeakError on a leak). So no
problem is tuned with a forecaster fitted on it. "roofline" has nothing to fit.

Metrics: autotune_time_saved_share = median over problems of 1 - pruned autotune_s / full
autotune_s; final_speed_vs_full_median = median of full's kernel ms / pruned's kernel ms (1.0:
as fast as full autotuning's pick); the same two for the random control (control_*), and the
forecaster fit time.

    PYTHONPATH=. python benchmarks/autotune_bench.py --out $OUT           # GPU
    PYTHONPATH=. python benchmarks/autotune_bench.py --cpu                # smoke: interpreter, tiny

--cpu runs the interpreter (TRITON_INTERPRET=1) at a tiny shape with a few configs and never
writes a result file.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Sequence

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import commit, write_results  # noqa: E402

RESULTS_DIR = Path(__file__).parent / "results"
#: Single-layer matmul problems: (dtype, (M, N, K) of the family's full-size layer).
PROBLEMS: dict[str, tuple[str, tuple[int, int, int]]] = {
    "L1/14_matmul_square_fp32": ("fp32", (4096, 4096, 4096)),
    "L1/15_matmul_square_bf16": ("bf16", (4096, 4096, 4096)),
    "L2/01_linear_bias_relu": ("fp32", (4096, 2048, 2048)),
    "L2/02_linear_bias_gelu_bf16": ("bf16", (8192, 4096, 4096)),
    "L2/22_linear_bias_silu_fp16": ("fp16", (4096, 4096, 4096)),
    "L2/30_linear_bias_hardtanh": ("fp32", (4096, 2048, 2048)),
}
ARMS = ("full", "pruned", "random")
DEFINITIONS = {
    "autotune_time_saved_share": "median over problems of 1 - (forecaster-pruned autotune wall time) / "
                                 "(full autotune wall time), both cold (fresh kernel object and Triton cache)",
    "final_speed_vs_full_median": "median over problems of full autotuning's chosen kernel ms / the pruned "
                                  "run's chosen kernel ms (triton.testing.do_bench): 1.0 = as fast",
    "control_autotune_time_saved_share": "the same for the random top-k control (same k)",
    "control_final_speed_vs_full_median": "the same for the random top-k control (same k)",
}

KERNEL = '''
import triton
import triton.language as tl


@triton.jit
def tiled_matmul(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, BM: tl.constexpr, BN: tl.constexpr,
                 BK: tl.constexpr, GROUP: tl.constexpr, IEEE: tl.constexpr):
    tile = tl.program_id(0)
    num_m = tl.cdiv(M, BM)
    num_n = tl.cdiv(N, BN)
    width = GROUP * num_n
    first = (tile // width) * GROUP
    size = tl.minimum(num_m - first, GROUP)
    pid_m = first + (tile % width) % size
    pid_n = (tile % width) // size
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        kk = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * sam + kk[None, :] * sak, mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * sbk + rn[None, :] * sbn, mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        if IEEE:
            acc = tl.dot(a, b, acc, input_precision="ieee")
        else:
            acc = tl.dot(a, b, acc)
    cmask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty), mask=cmask)
'''


def fresh_kernel(workdir: Path, tag: str):
    """A new JITFunction (no in-memory compile cache) from KERNEL written to its own file."""
    path = workdir / f"tiled_matmul_{tag}.py"
    path.write_text(KERNEL)
    spec = importlib.util.spec_from_file_location(f"tiled_matmul_{tag}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.tiled_matmul


def set_cache_dir(path: Path) -> None:
    """Point Triton's compile cache at `path` (the env var, and the knob where it exists)."""
    import triton

    os.environ["TRITON_CACHE_DIR"] = str(path)
    knobs = getattr(triton, "knobs", None)
    if knobs is not None and hasattr(knobs, "cache"):
        knobs.cache.dir = str(path)


def cpu_bench(fn: Callable[[], Any], quantiles=None, reps: int = 3):
    """Wall-clock timer for the interpreter smoke (ms; median, and the quantiles asked for)."""
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    med = statistics.median(times)
    return [med, min(times), max(times)] if quantiles else med


def trial(arm: str, configs: list, perf_model, top_k: int, tensors: tuple, ieee: bool, workdir: Path,
          cpu: bool) -> dict[str, Any]:
    """One cold autotune of `configs` (pruned to top_k by perf_model unless arm == "full");
    returns the autotune wall time, the chosen config and its measured kernel time."""
    import torch
    import triton

    a, b, c = tensors
    M, K = a.shape
    N = b.shape[1]
    cache = Path(tempfile.mkdtemp(prefix=f"triton_cache_{arm}_", dir=workdir))
    set_cache_dir(cache)
    prune = None if arm == "full" else {"perf_model": perf_model, "top_k": top_k}
    kw: dict[str, Any] = {"do_bench": cpu_bench} if cpu else {}
    tuned = triton.autotune(configs=configs, key=["M", "N", "K"], prune_configs_by=prune, **kw)(
        fresh_kernel(workdir, f"{arm}_{time.monotonic_ns()}"))

    def grid(meta):
        return (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)

    def call():
        tuned[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), IEEE=ieee)

    sync = torch.cuda.synchronize if not cpu else (lambda: None)
    sync()
    t0 = time.perf_counter()
    call()
    sync()
    autotune_s = time.perf_counter() - t0
    best = tuned.best_config
    kernel_ms = cpu_bench(call) if cpu else float(triton.testing.do_bench(call))
    ref = a.float() @ b.float()
    err = float((c.float() - ref).abs().max() / (ref.abs().max() + 1e-6))
    return {"autotune_s": autotune_s, "kernel_ms": kernel_ms, "benchmarked": len(getattr(tuned, "configs_timings", {}) or {}),
            "best": {**best.kwargs, "num_warps": best.num_warps, "num_stages": best.num_stages}, "rel_err": err}


def library_forecaster(name: str, gpu: str, tuned: Sequence[str]):
    """The forecaster, fitted on the shipped library rows of `gpu` without the tuned problems'
    rows (guarded by a protocol that holds the tuned problems out)."""
    if name == "roofline":
        from workbench.forecast.roofline import RooflineForecaster

        return RooflineForecaster(), {"fit_s": 0.0, "rows": 0}
    from workbench.dataset.shipped import load_shipped
    from workbench.forecast.learned import LearnedForecaster
    from workbench.landscape.protocol import Protocol, guard_forecaster

    protocol = Protocol(training=(), heldout=tuple(tuned), tie_rel=0.02, path="autotune_bench (tuned problems)",
                        sha256="")
    rs = protocol.training_only(load_shipped())
    ms = [m for m in rs.measurements if m.hardware_key == gpu]
    t0 = time.time()
    fc = guard_forecaster(LearnedForecaster(), protocol, "fitting the autotune forecaster")
    fc.fit(rs.problems, rs.candidates, ms)
    return fc, {"fit_s": round(time.time() - t0, 1), "rows": len(ms),
                "problems": len({m.problem_id for m in ms})}


def run_problem(pid: str, forecaster, hardware, n_configs: int, top_k: int, seed: int, workdir: Path,
                cpu: bool) -> dict[str, Any]:
    import torch

    from workbench.families import get_family
    from workbench.landscape.autotune import ForecastPerfModel, RandomPerfModel, matmul_tiled_map
    from workbench.problems import get_problem

    dtype, (M, N, K) = PROBLEMS[pid]
    mapping = matmul_tiled_map(get_family(pid))
    points = mapping.points()
    if cpu:  # the interpreter: the smallest tiles, a tiny shape
        points = [pt for pt in points if mapping.config_values(pt)["BM"] == 64 and mapping.config_values(pt)["BN"] == 64
                  and mapping.config_values(pt)["BK"] == 32]
        M = N = K = 64
    points = sorted(random.Random(f"autotune:{pid}:{seed}").sample(points, min(n_configs, len(points))))
    configs = mapping.configs(points)
    pm = ForecastPerfModel(forecaster, get_problem(pid), hardware, mapping)
    t0 = time.time()
    pm.prefetch(points)
    forecast_s = time.time() - t0
    control = RandomPerfModel(seed, list(mapping.from_config.values()))
    device = "cpu" if cpu else "cuda"
    tdtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[dtype]
    gen = torch.Generator(device=device).manual_seed(seed)
    a = torch.randn(M, K, device=device, dtype=tdtype, generator=gen)
    b = torch.randn(K, N, device=device, dtype=tdtype, generator=gen)
    c = torch.empty(M, N, device=device, dtype=tdtype)
    row: dict[str, Any] = {"problem_id": pid, "dtype": dtype, "shape": [M, N, K], "configs": len(configs),
                           "top_k": top_k, "forecast_s": round(forecast_s, 3)}
    for arm in ARMS:
        model = {"pruned": pm, "random": control}.get(arm)
        row[arm] = trial(arm, configs, model, top_k, (a, b, c), dtype == "fp32", workdir, cpu)
    row["forecast_rank_of_full_best"] = _rank_of(row["full"]["best"], points, mapping, pm)
    row["time_saved_share"] = 1 - row["pruned"]["autotune_s"] / row["full"]["autotune_s"]
    row["speed_vs_full"] = row["full"]["kernel_ms"] / row["pruned"]["kernel_ms"]
    row["control_time_saved_share"] = 1 - row["random"]["autotune_s"] / row["full"]["autotune_s"]
    row["control_speed_vs_full"] = row["full"]["kernel_ms"] / row["random"]["kernel_ms"]
    return row


def _rank_of(best: dict[str, Any], points, mapping, pm) -> int | None:
    """1-based rank, by the forecaster's estimate, of the config full autotuning chose."""
    order = sorted(points, key=lambda pt: -pm.expected_log2_speedup(pt))
    for i, pt in enumerate(order, 1):
        if mapping.config_values(pt) == best:
            return i
    return None


def metrics(rows: list[dict[str, Any]]) -> dict[str, Any]:
    def med(key):
        xs = [r[key] for r in rows]
        return statistics.median(xs) if xs else None

    return {"problems": len(rows), "autotune_time_saved_share": med("time_saved_share"),
            "final_speed_vs_full_median": med("speed_vs_full"),
            "control_autotune_time_saved_share": med("control_time_saved_share"),
            "control_final_speed_vs_full_median": med("control_speed_vs_full"),
            "full_autotune_s_median": statistics.median([r["full"]["autotune_s"] for r in rows]) if rows else None}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpu", default="h100")
    ap.add_argument("--problems", default=",".join(PROBLEMS))
    ap.add_argument("--configs", type=int, default=24, help="family points (autotune configs) per problem")
    ap.add_argument("--top-k", type=int, default=4, help="configs the pruned arms benchmark")
    ap.add_argument("--forecaster", choices=("learned", "roofline"), default="learned")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-seconds", type=float, default=420.0,
                    help="start no new problem after this many seconds (the device call's limit)")
    ap.add_argument("--cpu", action="store_true", help="smoke: interpreter, tiny shape, few configs, no result file")
    ap.add_argument("--out", type=str, default=None)
    args = ap.parse_args(argv)
    if args.cpu:
        os.environ["TRITON_INTERPRET"] = "1"
    pids = [p for p in args.problems.split(",") if p]
    unknown = [p for p in pids if p not in PROBLEMS]
    if unknown:
        ap.error(f"not a single-layer matmul landscape: {', '.join(unknown)}; choose from {', '.join(PROBLEMS)}")
    if args.top_k < 1 or args.top_k >= args.configs:
        ap.error("need 1 <= --top-k < --configs (pruning must leave something out)")
    t_start = time.time()
    hardware = _hardware(args.gpu, args.cpu)
    forecaster, fit = library_forecaster(args.forecaster, args.gpu, pids)
    rows, skipped = [], []
    with tempfile.TemporaryDirectory(prefix="autotune_bench_") as tmp:
        for pid in pids:
            if time.time() - t_start > args.max_seconds:
                skipped.append(pid)
                continue
            row = run_problem(pid, forecaster, hardware, args.configs, args.top_k, args.seed, Path(tmp), args.cpu)
            rows.append(row)
            print(f"{pid}: full {row['full']['autotune_s']:.1f}s -> pruned {row['pruned']['autotune_s']:.1f}s "
                  f"(random {row['random']['autotune_s']:.1f}s); kernel full {row['full']['kernel_ms']:.3f} ms, "
                  f"pruned {row['pruned']['kernel_ms']:.3f} ms, random {row['random']['kernel_ms']:.3f} ms",
                  file=sys.stderr)
    doc = {"benchmark": "autotune", "gpu": args.gpu, "date": time.strftime("%Y-%m-%d"), "commit": commit(),
           "metrics": {**metrics(rows), "forecaster_fit_s": fit["fit_s"]},
           "definitions": DEFINITIONS,
           "setup": {"forecaster": args.forecaster, "fit": fit, "fit_excludes": pids, "configs": args.configs,
                     "top_k": args.top_k, "seed": args.seed, "skipped_for_time": skipped, "cpu": args.cpu,
                     "seconds": round(time.time() - t_start, 1)},
           "rows": rows}
    if args.cpu:
        print(json.dumps(doc["metrics"], indent=1))
        print("smoke run (--cpu): no result file", file=sys.stderr)
        return 0
    full = not skipped and set(pids) == set(PROBLEMS)
    for p in write_results(RESULTS_DIR, f"autotune-{args.gpu}.json", json.dumps(doc, indent=1) + "\n", full,
                           args.out, "a partial run is not a result: pass --out DIR to keep it"):
        print(f"wrote {p}", file=sys.stderr)
    return 0


def _hardware(gpu: str, cpu: bool):
    """The hardware record forecasts are taken for: the GPU of the results' name (its peaks are
    looked up by key), as a replayed search takes it."""
    from workbench.records import Hardware

    return Hardware(key=gpu, name=gpu if not cpu else f"{gpu} (interpreter smoke)", kind="replay")


if __name__ == "__main__":
    sys.exit(main())
