"""Run every adversarial probe and its honest twin through the executor, in a process whose
own environment (what /proc/<pid>/environ shows) holds the secrets the probes try to steal.

    python tests/execution/adversarial/driver.py --out FILE [--cpu [--repeats N] | --gpu N] [--cheats]

Plain Python (no pytest): tests/execution/adversarial/test_adversarial.py runs it on the CPU,
benchmarks/integrity_bench.py on a GPU. Attacks run one per worker process (max_chunk 1: a
probe that tampers with its worker must not meet another probe there); twins, honest, share
chunk workers (on a GPU they run first, alone on the machine). Writes JSON: results and twins
({name: {status, reason, log, speedup, reference_ms, candidate_ms}, plus `speedups` under
--repeats on the CPU}), the side effects (probes.Probes.side_effects), cheats
(tests/execution/fixtures/cheats, with --cheats), the hardware and the seconds taken.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path[:0] = [str(ROOT), str(HERE), str(HERE.parent)]

from probes import MARKER, MARKER_ENV, SECRET, SECRET_ENV, Probes, expect  # noqa: E402

#: Short timing on the CPU: the tests check statuses and containment, not CPU speed.
CPU_OPTIONS = {"seeds": [0, 1], "cpu_timing": {"max_total_ms": 100, "max_runs": 5}}


def _row(m) -> dict:
    # The two medians beside the speedup: a speedup off its twin's says which side moved.
    return {"status": m.status.value, "reason": m.reason, "log": m.log, "speedup": m.speedup,
            "reference_ms": m.reference_ms, "candidate_ms": m.candidate_ms}


def _executors(args):
    """(attack executor, twin executor, hardware)."""
    if args.cpu:
        from workbench.execution.executors import ChunkedExecutor, CPUExecutor
        from workbench.execution.hardware import cpu_hardware

        attacks = CPUExecutor(workers=2, timeout_s=25, run_timeout_s=30, options=CPU_OPTIONS,
                              cache_root=args.tmp / "cache")
        twins = ChunkedExecutor(cpu_hardware(), device="cpu", workers=2, max_chunk=16, timeout_s=60,
                                options=CPU_OPTIONS, cache_root=args.tmp / "cache")
        return attacks, twins
    from workbench.execution.executors import LocalGPUExecutor

    common = dict(gpus=[args.gpu], workers=args.workers, timeout_s=120, cache_root=args.tmp / "cache")
    return LocalGPUExecutor(max_chunk=1, linger_s=0.0, **common), LocalGPUExecutor(max_chunk=8, **common)


def _repeat(repeats: int, probes, attacks, twins, results: dict, twin_rows: dict) -> None:
    """Measure each probe that may end contained, and its twin, `repeats` times in all (the
    later runs submitted pairwise, probe beside twin): their rows gain `speedups`, one per run
    (None where a run was not ok), which probes.outcome compares by their medians. On a few
    shared CPU cores one sample set of a sub-millisecond call can be off by 10-25x (the clock
    holds the call's round trip to a worker process); a forged time is off by 10,000x in every
    run."""
    names = [n for n in probes.twins if "contained" in expect(n)]
    for n in names:
        results[n]["speedups"] = [results[n]["speedup"] if results[n]["status"] == "ok" else None]
        twin_rows[n]["speedups"] = [twin_rows[n]["speedup"] if twin_rows[n]["status"] == "ok" else None]
    for _ in range(repeats - 1):
        fut = {n: (attacks.submit(probes.problem, [probes.candidates[n]])[0],
                   twins.submit(probes.problem, [probes.twins[n]])[0]) for n in names}
        for n, (fa, ft) in fut.items():
            for rows, f in ((results, fa), (twin_rows, ft)):
                m = f.result()
                rows[n]["speedups"].append(m.speedup if m.status.value == "ok" else None)


def run(args) -> dict:
    probes = Probes(args.tmp)
    jobs = [(n, probes.problem, c) for n, c in probes.candidates.items()]
    if args.cheats:
        from exec_fixtures import load_fixtures

        jobs += [(f"cheat:{f.name}", f.problem, f.candidate) for f in load_fixtures("cheats")]
    t0 = time.time()
    attacks, twins = _executors(args)
    if args.cpu:
        with attacks, twins:
            fut = {n: attacks.submit(p, [c])[0] for n, p, c in jobs}
            tfut = {n: twins.submit(probes.problem, [c])[0] for n, c in probes.twins.items()}
            results = {n: _row(f.result()) for n, f in fut.items()}
            twin_rows = {n: _row(f.result()) for n, f in tfut.items()}
            _repeat(args.repeats, probes, attacks, twins, results, twin_rows)
            hardware = attacks.hardware.to_dict()
    else:
        # On a GPU the twins first, with no probe on the machine: each executor has its own
        # timer, and a twin timed beside a probe's leftover GPU work is flagged for it.
        with twins:
            twin_rows = {n: _row(f.result()) for n, f in
                         {n: twins.submit(probes.problem, [c])[0] for n, c in probes.twins.items()}.items()}
        with attacks:
            results = {n: _row(f.result()) for n, f in {n: attacks.submit(p, [c])[0] for n, p, c in jobs}.items()}
            hardware = attacks.hardware.to_dict()
    time.sleep(1.0)
    from workbench.execution import contain

    return {"results": results, "twins": twin_rows, "side": probes.side_effects(), "hardware": hardware,
            "seconds": round(time.time() - t0, 1), "containment": contain.describe()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--cpu", action="store_true")
    ap.add_argument("--gpu", type=int, default=0)
    ap.add_argument("--workers", type=int, default=12)
    ap.add_argument("--cheats", action="store_true")
    ap.add_argument("--repeats", type=int, default=1,
                    help="on the CPU: runs of each probe that may end contained and of its twin (see _repeat)")
    args = ap.parse_args(argv)
    if os.environ.get(MARKER_ENV) != MARKER:
        # Start again with the secrets in this process's own environment block, where a
        # candidate reading /proc/<pid>/environ of its ancestors would find them.
        env = dict(os.environ, **{MARKER_ENV: MARKER, SECRET_ENV: SECRET})
        os.execve(sys.executable, [sys.executable, __file__, *(argv if argv is not None else sys.argv[1:])], env)
    if args.cpu:
        os.environ["TRITON_INTERPRET"] = "1"
    args.tmp = Path(tempfile.mkdtemp(prefix="wb_probes_"))
    out = run(args)
    args.out.write_text(json.dumps(out, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
