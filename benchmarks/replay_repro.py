"""Does the code at HEAD reproduce a committed replay search result exactly?

    python benchmarks/replay_repro.py --gpu h100 [--jobs 2] [--problems ID,...] [--out DIR]

Replay searches (`benchmarks/search_bench.py`) answer every GPU measurement from recorded data, so
they are a pure function of the code, the data and the settings. This script re-runs the replay
runs recorded in `benchmarks/results/search-<gpu>.json` with today's code on the shipped data of
the commits that recorded them (read with `git show`, never the working tree's data, which grows):
the forecaster-driven methods on the data at the file's `commit`, the random-score controls on the
data at `setup.controls.commit` when they were added later. Settings (budget, seeds, k, m,
forecaster, adapt_forecasts, problems) are the file's `setup`, not today's defaults.

Each re-run run is compared with the recorded run of the same (problem, method, seed) on every
field both hold, exactly (JSON round trip, floats bit for bit). Writes
`benchmarks/results/replay-repro-<gpu>.json` (benchmark, gpu, date, commit, metrics) for a run
over every recorded problem.

Metrics: runs_recorded, runs_replayed, runs_equal, runs_differing (count), missing (recorded runs
not replayed, within the problems run), fields_only_recorded / fields_only_replayed (field names
that one side lacks; not compared), reproduces (runs_equal == runs_replayed == runs of the
problems run, and nothing missing). `differences` lists up to 20 differing runs with the fields
that differ and, for scalar fields, [recorded, replayed]. `--problems` or `--max-problems` run a
subset, written only into the `--out` directory. Exit 0 when it reproduces, 1 when it does not, 2
on bad input.

`--conformal-starts N` replays with `ConformalRiskController.default_starts = N` (the scans of the
selective methods' conformal controller; the controller of the recorded runs had one scan) and
writes `replay-repro-conformal-starts<N>-<gpu>.json` instead: with N = 1 it tells whether the
runs that differ at the default come from that controller change alone.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for p in (str(ROOT), str(HERE)):
    if p not in sys.path:
        sys.path.insert(0, p)

from _common import commit, write_results  # noqa: E402

from workbench.calibration.conformal import ConformalRiskController  # noqa: E402
from workbench.errors import ConfigError, WorkbenchError  # noqa: E402

DEFAULT_STARTS = ConformalRiskController.default_starts

RESULTS_DIR = HERE / "results"
SHIPPED = "kernels_cache/shipped"
#: How many differing runs the result lists (all are counted).
MAX_LISTED = 20


def shipped_at(rev: str, dest: Path, root: Path = ROOT) -> Path:
    """Write the shipped data directory as committed at `rev` into `dest`; returns `dest`.
    ConfigError when `rev` or its data is not in this clone's history."""
    dest.mkdir(parents=True, exist_ok=True)
    try:
        names = subprocess.run(["git", "ls-tree", "--name-only", f"{rev}:{SHIPPED}"], cwd=root,
                               capture_output=True, text=True, check=True, timeout=30).stdout.split()
        for name in names:
            blob = subprocess.run(["git", "show", f"{rev}:{SHIPPED}/{name}"], cwd=root, capture_output=True,
                                  check=True, timeout=60).stdout
            (dest / name).write_bytes(blob)
    except subprocess.SubprocessError as e:
        raise ConfigError(f"the shipped data of commit {rev} is not in this clone's history ({e}); "
                          "run from a full clone (not --depth)") from e
    return dest


def _key(run: dict[str, Any]) -> tuple[str, str, int]:
    return run["problem_id"], run["method"], run["seed"]


def _short(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


def compare_runs(recorded: list[dict[str, Any]], replayed: list[dict[str, Any]],
                 problems: list[str]) -> dict[str, Any]:
    """Compare replayed runs with the recorded runs of `problems`, field by field on the fields
    both hold (JSON round trip first, so tuples and lists compare alike). See the module doc."""
    problems_set = set(problems)
    old = {_key(r): r for r in recorded if r["problem_id"] in problems_set}
    new = {_key(r): json.loads(json.dumps(r)) for r in replayed}
    only_old: set[str] = set()
    only_new: set[str] = set()
    differences = []
    equal = 0
    for key, run in new.items():
        ref = old.get(key)
        if ref is None:
            differences.append({"run": list(key), "fields": ["<not recorded>"]})
            continue
        only_old |= set(ref) - set(run)
        only_new |= set(run) - set(ref)
        fields = sorted(f for f in set(ref) & set(run) if ref[f] != run[f])
        if fields:
            differences.append({"run": list(key), "fields": fields,
                                "values": {f: [ref[f], run[f]] for f in fields if _short(ref[f]) and _short(run[f])}})
        else:
            equal += 1
    missing = sorted(set(old) - set(new))
    return {
        "runs_recorded": len(old),
        "runs_replayed": len(new),
        "runs_equal": equal,
        "runs_differing": len(differences),
        "missing": len(missing),
        "fields_only_recorded": sorted(only_old),
        "fields_only_replayed": sorted(only_new),
        "reproduces": equal == len(new) == len(old) and not missing,
        "differences": differences[:MAX_LISTED],
        "missing_runs": [list(k) for k in missing[:MAX_LISTED]],
    }


def replay_again(doc: dict[str, Any], gpu: str, jobs: int = 1, max_problems: int | None = None,
                 only: list[str] | None = None, root: Path = ROOT,
                 progress: bool = False) -> tuple[list[dict[str, Any]], list[str], dict]:
    """Re-run the replay runs a search_bench result `doc` records, grouped by the commit whose
    shipped data recorded them. Returns (runs, problems run, {data commit: methods})."""
    from search_bench import CONTROLS, REPLAY_METHODS, learned_factory, roofline_factory, run_benchmark

    from workbench.dataset.shipped import load_shipped

    setup = doc.get("setup") or {}
    recorded = doc.get("replay_runs") or []
    if not recorded or not setup.get("problems") or not doc.get("commit"):
        raise ConfigError("the results file records no replay runs with their setup and commit; "
                          "run benchmarks/search_bench.py first")
    problems = list(setup["problems"])[:max_problems]
    if only is not None:
        unknown = sorted(set(only) - set(problems))
        if unknown:
            raise ConfigError(f"--problems {unknown} are not among the recorded problems")
        problems = [pid for pid in problems if pid in only]
    methods = list(dict.fromkeys(r["method"] for r in recorded))
    unknown = [m for m in methods if m not in REPLAY_METHODS]
    if unknown:
        raise ConfigError(f"recorded methods {unknown} are not replay methods of this code ({list(REPLAY_METHODS)})")
    controls = setup.get("controls") or {}
    groups: dict[str, list[str]] = {}
    for m in methods:
        rev = controls["commit"] if m in CONTROLS and controls.get("commit") else doc["commit"]
        groups.setdefault(rev, []).append(m)
    factory = learned_factory if setup.get("forecaster", "learned") == "learned" else roofline_factory
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="replay_repro_") as tmp:
        for i, (rev, group) in enumerate(groups.items()):
            records = load_shipped(shipped_at(rev, Path(tmp) / f"data{i}", root))
            by_id = {p.id: p for p in records.problems}
            absent = [pid for pid in problems if pid not in by_id]
            if absent:
                raise ConfigError(f"problems {absent[:3]} are not in the shipped data of {rev}")
            runs += run_benchmark(records, gpu, setup["budget"], list(range(setup["seeds"])), factory,
                                  [by_id[pid] for pid in problems], methods=group, k=setup["k"],
                                  m=setup["m"], progress=progress, adapt=setup.get("adapt_forecasts", True),
                                  jobs=jobs, forecaster=setup.get("forecaster", "learned"))
    return runs, problems, groups


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpu", default="h100", help="the hardware key of search-<gpu>.json")
    ap.add_argument("--results", default=None, help="the committed result to reproduce "
                    "(default benchmarks/results/search-<gpu>.json)")
    ap.add_argument("--jobs", type=int, default=1, help="problems replayed at once (same results)")
    ap.add_argument("--max-problems", type=int, default=None, help="only the first N recorded problems "
                    "(written only to --out)")
    ap.add_argument("--problems", default=None, help="only these recorded problems (comma-separated ids; "
                    "written only to --out)")
    ap.add_argument("--out", default=None, help="also write the result into this directory")
    ap.add_argument("--conformal-starts", type=int, default=None, metavar="N",
                    help="replay with N scans in the conformal controller (1: the single scan of "
                         "the controller before the multi-start one); see the module doc")
    args = ap.parse_args(argv)
    name = "replay-repro"
    if args.conformal_starts is not None:
        if args.conformal_starts < 1:
            print(f"error: --conformal-starts must be at least 1, got {args.conformal_starts}", file=sys.stderr)
            return 2
        ConformalRiskController.default_starts = args.conformal_starts  # this process and its forks
        name = f"replay-repro-conformal-starts{args.conformal_starts}"
    path = Path(args.results) if args.results else RESULTS_DIR / f"search-{args.gpu}.json"
    t0 = time.time()
    try:
        doc = json.loads(path.read_text())
        only = [x for x in args.problems.split(",") if x] if args.problems else None
        runs, problems, groups = replay_again(doc, args.gpu, jobs=args.jobs, max_problems=args.max_problems,
                                              only=only, progress=True)
    except (OSError, ValueError, WorkbenchError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    result = compare_runs(doc["replay_runs"], runs, problems)
    differences, missing_runs = result.pop("differences"), result.pop("missing_runs")
    out = {
        "benchmark": name,
        "gpu": args.gpu,
        "date": time.strftime("%Y-%m-%d"),
        "commit": commit(),
        "notes": "Replay runs of the committed search result re-run with this commit's code on the "
                 "shipped data of the commits that recorded them, compared field by field, exactly "
                 "(benchmarks/replay_repro.py). Measures nothing on a GPU: replay answers from "
                 "recorded measurements."
                 + ("" if args.conformal_starts is None else
                    f" The conformal controller ran with {args.conformal_starts} scan(s) instead of "
                    f"its default {DEFAULT_STARTS}."),
        "metrics": result,
        "setup": {"results_file": str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path),
                  "recorded_commit": doc["commit"], "data_commits": groups, "problems": len(problems),
                  "budget": doc["setup"]["budget"], "seeds": doc["setup"]["seeds"], "k": doc["setup"]["k"],
                  "m": doc["setup"]["m"], "forecaster": doc["setup"].get("forecaster"),
                  "conformal_starts": args.conformal_starts,
                  "jobs": args.jobs, "seconds": round(time.time() - t0, 1)},
        "differences": differences,
        "missing_runs": missing_runs,
    }
    full = len(problems) == len(doc["setup"]["problems"])
    write_results(RESULTS_DIR, f"{name}-{args.gpu}.json", json.dumps(out, indent=2) + "\n", full,
                  args.out, partial="a run over some of the problems: pass --out to keep it")
    print(json.dumps(out["metrics"], indent=2))
    return 0 if result["reproduces"] else 1


if __name__ == "__main__":
    sys.exit(main())
