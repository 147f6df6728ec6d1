"""Time to first candidate of `workbench search` on replay data, cold vs warm fit cache.

Runs the CLI as a fresh process (imports included) against a database holding the shipped
measurements, once with an empty fitted-forecaster cache (cold: the learned forecaster is
fitted) and `--warm` times with that cache filled (warm: it is loaded), and prints one JSON
line per run: `t_ready_s` (the "search ID: ..." line: forecaster ready, run started),
`t_first_candidate_s` (the first progress-bar update with a GPU measurement), `total_s` and
the forecaster stage messages. Nothing is written to benchmarks/results.

    workbench --db /tmp/wb.sqlite dataset load-shipped
    python benchmarks/cli_start_bench.py --db /tmp/wb.sqlite --cache /tmp/wb-cache [--warm 3]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time


def run_once(cmd: list[str], env: dict[str, str]) -> dict:
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    err, t_ready, t_first = b"", None, None
    while True:
        chunk = os.read(p.stderr.fileno(), 4096)
        if not chunk:
            break
        now = time.perf_counter() - t0
        err += chunk
        text = err.decode(errors="replace")
        if t_ready is None and re.search(r"^search \w+: ", text, re.M):
            t_ready = now
        if t_first is None and re.search(r"\|\s*[1-9]\d*/\d+ \[", text):
            t_first = now
    out = p.stdout.read().decode()
    rc = p.wait()
    stages = [ln for ln in err.decode(errors="replace").splitlines()
              if "forecaster" in ln and ("fitting" in ln or "loaded" in ln)]
    return {"rc": rc, "t_ready_s": t_ready, "t_first_candidate_s": t_first,
            "total_s": time.perf_counter() - t0, "stages": stages,
            "summary": [ln for ln in out.splitlines() if ln.startswith(("best speedup", "GPU measurements"))]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", required=True, help="database with the shipped measurements")
    ap.add_argument("--cache", required=True, help="fitted-forecaster cache folder (emptied first)")
    ap.add_argument("--warm", type=int, default=3, help="warm runs after the cold one")
    ap.add_argument("--problem", default="L1/01_softmax")
    args = ap.parse_args()
    shutil.rmtree(args.cache, ignore_errors=True)
    env = dict(os.environ, WORKBENCH_CACHE_DIR=args.cache)
    cmd = [sys.executable, "-m", "workbench.cli", "--db", args.db, "search", "--problem", args.problem,
           "--gpu", "replay:h100", "--method", "screen_topk", "--budget", "40", "--forecaster", "learned",
           "--seed", "0"]
    for label in ["cold"] + [f"warm{i + 1}" for i in range(args.warm)]:
        r = run_once(cmd, env)
        print(json.dumps({"label": label, "load_avg_1min": os.getloadavg()[0], **r}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
