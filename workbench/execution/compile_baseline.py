"""What torch.compile gives for free: time a problem's reference eager and compiled.

    python -m workbench.execution.compile_baseline PROBLEM_JSON OUT_JSON [--mode MODE]

Both are timed in this one process on one GPU with the executor's timing (CUDA events, L2
flushed, inputs rotated). The result JSON holds eager_ms, compiled_ms, speedup_over_eager,
compile_s (wall time of the first compiled call) and the mode.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from workbench.problems import load_source
from workbench.records import Problem

DEFAULT_MODE = "max-autotune-no-cudagraphs"


def time_compiled(problem: Problem, mode: str = DEFAULT_MODE, device: str = "cuda") -> dict:
    import torch

    from workbench.execution.timing import L2Flusher, time_cuda

    lp = load_source(problem.source, name=problem.id)
    torch.manual_seed(0)
    model = lp.Model(*lp.get_init_inputs()).to(device).eval()
    sets = []
    for k in range(3):
        torch.manual_seed(9000 + k)
        sets.append([x.to(device) if isinstance(x, torch.Tensor) else x for x in lp.get_inputs()])
    flush = L2Flusher(torch.device(device))

    def call(m):
        def fn(inputs):
            with torch.no_grad():
                return m(*inputs)
        return fn

    eager = time_cuda(call(model), sets, flush=flush, max_total_ms=1000)
    compiled = torch.compile(model, mode=mode)
    t0 = time.time()
    with torch.no_grad():
        compiled(*sets[0])
    torch.cuda.synchronize()
    compile_s = time.time() - t0
    comp = time_cuda(call(compiled), sets, flush=flush, max_total_ms=1000)
    return {"problem_id": problem.id, "mode": mode, "eager_ms": eager.median_ms, "compiled_ms": comp.median_ms,
            "speedup_over_eager": eager.median_ms / comp.median_ms, "compile_s": compile_s,
            "eager_cv_pct": eager.cv_pct, "compiled_cv_pct": comp.cv_pct}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("problem_json")
    ap.add_argument("out_json")
    ap.add_argument("--mode", default=DEFAULT_MODE)
    args = ap.parse_args(argv)
    problem = Problem.from_dict(json.loads(Path(args.problem_json).read_text()))
    try:
        result = time_compiled(problem, args.mode)
    except Exception as e:  # noqa: BLE001 - a problem torch.compile cannot handle is a result too
        result = {"problem_id": problem.id, "mode": args.mode, "error": f"{type(e).__name__}: {str(e)[:500]}"}
    Path(args.out_json).write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
