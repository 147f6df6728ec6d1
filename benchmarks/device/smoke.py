"""Device smoke test: probe the GPU, then measure the zoo of one problem plus a few broken
candidates through the real executor. Prints a table; writes JSON lines under $OUT."""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from workbench.execution.executors import LocalGPUExecutor
from workbench.problems import get_problem
from workbench.records import Candidate
from workbench.zoo import zoo_kernels


def main() -> int:
    p = get_problem(sys.argv[1] if len(sys.argv) > 1 else "softmax")
    srcs = {k.variant: k.source for k in zoo_kernels(p.id)}
    good = next(iter(srcs.values()))
    srcs["broken_syntax"] = good.replace("def forward", "def forward(")
    srcs["segfault"] = "import os, signal\nimport torch.nn as nn\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        os.kill(os.getpid(), signal.SIGSEGV)\n"
    srcs["hang"] = "import torch.nn as nn\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        while True:\n            pass\n"
    cands = [Candidate.from_source(p.id, s, origin=f"smoke:{k}") for k, s in srcs.items()]
    t0 = time.time()
    with LocalGPUExecutor(gpus=[0], workers=8, timeout_s=60) as ex:
        print(json.dumps(ex.hardware.to_dict()))
        ms = ex.measure(p, cands)
    out = Path(os.environ.get("OUT", "/tmp"))
    with open(out / "smoke.jsonl", "w") as fh:
        for c, m in zip(cands, ms):
            fh.write(json.dumps(m.to_dict()) + "\n")
            sp = f"{m.speedup:.3f}" if m.speedup else "-"
            print(f"{c.origin:28s} {m.status.value:16s} {sp:>8s} ref={m.reference_ms} cand={m.candidate_ms} {m.reason[:160]}")
    print(f"{len(cands)} candidates in {time.time() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
