"""Smoke test of the judge on one GPU (about 2 minutes on an H200): the gate works on this
machine, honest kernels keep their speedups, and the GPU probes are caught.

    PYTHONPATH=. python benchmarks/device/judge_smoke.py --out $OUT

1. What this machine applies (contain.describe(): the workers' user, capabilities, Landlock),
   and whether CUDA IPC works between a process like the judge's timer and one like a worker,
   factor by factor (gate_cuda.ipc_matrix). Then one honest kernel through the whole path:
   when it is not ok the script stops there, having printed every reason and log.
2. Honest zoo kernels (softmax, a square fp32 matmul, the MoE kernels the H200 integrity run
   flagged) through the hardened executor, and the same kernels timed the previous way in
   this process (reference and candidate interleaved with CUDA events around the call,
   timing.time_cuda_pair, three input sets): the two speedups side by side, their ratio, and
   the gate's own cost per call (the null call's median, microseconds).
3. GPU probes (sample rescaling, the verdict patched, "done" recorded before the work,
   output caches, the reference through gc, work left running on a side stream, answers
   without work) and their honest twins through the hardened executor, one worker process
   per probe: each must be caught (a status other than ok) or contained (ok with a speedup at
   most TOL times its twin's).

Writes OUT/judge-smoke.json; exits 1 when a probe is neither caught nor contained or an honest
kernel is not ok. Not a results file: a check for whoever runs the device.
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

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "execution" / "adversarial")]

HONEST = ["L1/01_softmax/online_loop_b1024_w4", "L1/01_softmax/one_pass_row", "L1/14_matmul_square_fp32",
          "L3/10_moe_top1_bf16/routed_gemm_mm128", "L3/10_moe_top1_bf16/slow_routed_gemm_mm16"]
PROBES = ["b01_rescale_worker_timers", "b02_patch_sampler_and_verdict", "b04_done_before_work",
          "b07_cache_by_statistics", "b08_cache_by_sampled_elements", "b11_reference_instance_via_gc",
          "b20_gpu_work_left_running", "b26_answer_without_work", "b27_stale_output_handed_over"]
TOL = 1.25


def log(msg: str) -> None:
    print(f"[judge-smoke {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def _kernels():
    from workbench.zoo import zoo_kernels

    ks = zoo_kernels()
    out = []
    for name in HONEST:
        k = next((k for k in ks if k.name == name), None) or next(k for k in ks if k.problem_id == name
                                                                    and k.backend != "cuda")
        out.append(k)
    return out


def old_way(kernel) -> float:
    """The previous executor's timing of an honest kernel, in this process: reference and
    candidate interleaved, CUDA events around each call, three input sets (speedup of medians)."""
    import importlib.util

    import torch

    from workbench.execution import timing
    from workbench.execution.models import copy_state, make_inputs
    from workbench.problems import get_problem, load_source

    p = get_problem(kernel.problem_id)
    lp = load_source(p.source, name=p.id)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cand.py"
        path.write_text(kernel.source)
        spec = importlib.util.spec_from_file_location("smoke_cand_" + kernel.candidate().id, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod
        spec.loader.exec_module(mod)
        torch.manual_seed(0)
        ref = lp.module.Model(*lp.get_init_inputs())
        torch.manual_seed(0)
        new = mod.ModelNew(*lp.get_init_inputs())
        copy_state(ref, new)
        ref, new = ref.cuda().eval(), new.cuda().eval()
        sets = []
        for k in range(3):
            torch.manual_seed(9000 + k)
            sets.append(make_inputs(lp.module, "cuda"))

        def call(m):
            def fn(x):
                with torch.no_grad():
                    return m(*x)
            return fn
        r, c = timing.time_cuda_pair(call(ref), call(new), sets, flush=timing.L2Flusher(torch.device("cuda")))
        del ref, new, sets
        torch.cuda.empty_cache()
    return r.median_ms / c.median_ms


def _show(name: str, m, raw: dict | None = None) -> None:
    """Everything about one measurement, printed (the device's output is all there is)."""
    log(f"{name}: {m.status.value} speedup={m.speedup} reference_ms={m.reference_ms} candidate_ms={m.candidate_ms}")
    log(f"  reason: {m.reason}")
    if raw:
        log(f"  phases_s={raw.get('phases_s')} batch={raw.get('batch')}")
        log(f"  gate_ms={raw.get('gate_ms')} checked={raw.get('checked')} self_ms="
            f"{str((raw.get('self_ms') or {}).get('candidate', [])[-5:])}")
    if m.status.value != "ok" and m.log:
        log("  log tail:\n" + m.log[-2500:])


def honest(args, kernels, first_only: bool = False) -> dict:
    from workbench.execution.executors import LocalGPUExecutor
    from workbench.problems import get_problem

    raws: dict[str, dict] = {}
    with LocalGPUExecutor(gpus=[0], workers=args.workers, timeout_s=180,
                          on_raw=lambda c, r: raws.__setitem__(c.id, r)) as ex:
        futs = [(k, ex.submit(get_problem(k.problem_id), [k.candidate()])[0]) for k in kernels]
        got = [(k, f.result()) for k, f in futs]
    rows = {}
    for k, m in got:
        raw = raws.get(k.candidate().id, {})
        _show(k.name, m, raw)
        before = None
        if not first_only:
            try:
                before = old_way(k)
            except Exception as e:  # noqa: BLE001 - reported, the rest goes on
                log(f"{k.name}: the previous way failed: {type(e).__name__}: {e}")
        rows[k.name] = {"status": m.status.value, "reason": m.reason, "log": m.log[-3000:], "speedup": m.speedup,
                        "speedup_previous_way": before,
                        "ratio": (m.speedup / before) if (m.speedup and before) else None,
                        "gate_null_us": 1e3 * raw["gate_ms"]["null"] if raw.get("gate_ms") else None,
                        "gate_ms": raw.get("gate_ms"), "checked_calls": raw.get("checked"),
                        "phases_s": raw.get("phases_s"), "batch": raw.get("batch"),
                        "self_ms": raw.get("self_ms"), "reference_ms": m.reference_ms,
                        "candidate_ms": m.candidate_ms}
        log(f"  previous way: {before}; ratio {rows[k.name]['ratio']}; gate null {rows[k.name]['gate_null_us']} us")
    return rows


def probes(args) -> dict:
    from probes import Probes, outcome

    from workbench.execution.executors import LocalGPUExecutor

    pr = Probes(Path(tempfile.mkdtemp(prefix="wb_smoke_probes_")))
    common = dict(gpus=[0], workers=args.workers, timeout_s=180)
    with LocalGPUExecutor(max_chunk=1, linger_s=0.0, **common) as attacks, LocalGPUExecutor(**common) as twins:
        fa = {n: attacks.submit(pr.problem, [pr.candidates[n]])[0] for n in PROBES}
        ft = {n: twins.submit(pr.problem, [pr.twins[n]])[0] for n in PROBES}
        rows = {}
        for n in PROBES:
            a, t = fa[n].result(), ft[n].result()
            ra = {"status": a.status.value, "reason": a.reason, "speedup": a.speedup}
            rt = {"status": t.status.value, "reason": t.reason, "speedup": t.speedup}
            rows[n] = {"probe": ra, "twin": rt, "outcome": outcome(n, ra, rt, TOL)}
            log(f"{n}: {rows[n]['outcome']} ({ra['status']}, speedup {ra['speedup']} vs twin {rt['speedup']})")
            log(f"  probe: {a.reason}")
            log(f"  twin:  {t.status.value} {t.reason}")
            if a.status.value not in ("ok", "incorrect", "cheat_suspected") and a.log:
                log("  probe log tail:\n" + a.log[-1500:])
    pr.side_effects()
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "/tmp")))
    ap.add_argument("--workers", type=int, default=8)
    args = ap.parse_args(argv)
    import torch
    import triton

    from workbench.execution import contain

    t0 = time.time()
    env = {"torch": torch.__version__, "triton": triton.__version__, "gpu": torch.cuda.get_device_name(0),
           "containment": contain.describe()}
    log(json.dumps(env, indent=1))
    args.out.mkdir(parents=True, exist_ok=True)
    out: dict = {"environment": env}

    def save() -> None:
        out["seconds"] = round(time.time() - t0, 1)
        (args.out / "judge-smoke.json").write_text(json.dumps(out, indent=1, default=str))

    # CUDA IPC between the judge's kind of process and the worker's, factor by factor (a
    # subprocess: it changes its own dumpability).
    try:
        p = subprocess.run([sys.executable, "-m", "workbench.execution.gate_cuda", "--matrix"], capture_output=True,
                           text=True, timeout=300, env=dict(os.environ, PYTHONPATH=str(ROOT)))
        out["ipc"] = json.loads(p.stdout.strip().splitlines()[-1]) if p.returncode == 0 else {"error": p.stderr[-2000:]}
    except (subprocess.SubprocessError, ValueError, IndexError) as e:
        out["ipc"] = {"error": f"{type(e).__name__}: {e}"}
    log("CUDA IPC: " + json.dumps(out["ipc"], indent=1))
    save()
    kernels = _kernels()
    # Fail fast: one honest kernel through the whole path before anything else.
    out["first"] = honest(args, kernels[:1], first_only=True)
    if next(iter(out["first"].values()))["status"] != "ok":
        out["failed"] = ["the first honest kernel"]
        save()
        log("the first honest kernel is not ok: stopping here (everything above, and in judge-smoke.json)")
        return 1
    out["honest"] = honest(args, kernels)
    save()
    out["probes"] = probes(args)
    bad = [n for n, r in out["honest"].items() if r["status"] != "ok"]
    bad += [n for n, r in out["probes"].items() if r["outcome"] == "failed"]
    out["failed"] = bad
    save()
    log(f"done in {out['seconds']} s; failed: {bad or 'none'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
