"""KernelBench-layout folder end to end: import, seed, search each problem, compare with eager and
torch.compile, on every GPU of the machine.

    PYTHONPATH=. python benchmarks/kb_bench.py tests/problems/kb_corpus --out $OUT
    PYTHONPATH=. python benchmarks/kb_bench.py tests/problems/kb_corpus --out $OUT --resume prev/kb-rows.jsonl
    PYTHONPATH=. python benchmarks/kb_bench.py tests/problems/kb_corpus --summarize c1/kb-rows.jsonl c2/kb-rows.jsonl
    PYTHONPATH=. python benchmarks/kb_bench.py DIR --cpu --limit 3 --budget 3   # smoke, Triton interpreter

The parent loads DIR as `workbench problems import` does (counts derived), leaves out problems
already in `--resume` (a previous call's `kb-rows.jsonl`) or in `--out`'s rows, and shards the
rest over the GPUs (`--gpus`, default all), one process per GPU. A GPU's process:

1. starts `python -m workbench.seeds.inductor` on its GPU for its problems: Inductor's seed
   (torch.compile, dynamic shapes, rewritten and validated) and the torch.compile baseline (default
   mode, static shapes, no CUDA graphs, timed against eager in that process, alone on the GPU
   through the executor's GPU lock); it is restarted past a problem it died on;
2. searches its problems `--concurrent` at a time on one executor (`--workers` worker processes
   compile and check in parallel, timing is exclusive per GPU): seeds from the zoo generator
   (the Inductor seed when there is one, the family lowering, the generic seed), children by
   the mutation operators, `--method` with the `--forecaster`, `--budget` GPU measurements each
   (the seeds' included);
3. appends one row per finished problem to `--out`/kb-rows.jsonl as soon as it has it and prints
   progress;
4. with `--carry-at-s T`: T seconds after the start, stops, saves the searches still in flight
   (their SQLite stores, as of their last recorded event) to `--out`/kb-inflight-<gpu>.tar.xz and
   ends, so that a call of a limited length loses at most the measurements under way. A call
   resuming from it continues those searches (SearchRun.resume) before it starts new problems,
   with the same budget; their rows count the calls they spanned (`calls`) and the search
   seconds of all of them.

Calls resume at one commit: every row names the commit it was measured at, `--out`/kb-call.json
names this call's, and `--resume` carries over only rows of this commit (the others are left out
and measured again) together with the Inductor captures and the searches in flight of earlier
calls at this commit (the `kb-captures-*.jsonl` and `kb-inflight-*.tar.xz` beside their rows: a
resumed call does not compile those problems again, and goes on with those searches).
A summary of rows from more than one commit is refused.

A row: problem_id, level, gpu, budget, seed_kind (the kind of the best correct seed: the one
the search starts from), seeds ({kind: correct?}), correct (a correct candidate was found),
correct_seed, seed_errors (for each seed not correct: the judge's status and reason),
best_over_eager (the best measured speedup over the eager reference), compile
(the baseline), best_over_compile (best_over_eager / torch.compile's speedup over eager),
measurements (GPU measurements used), finish_reason, search_s (over every call), calls (the
calls the search ran in), judge_s (where the judge's time went: see JudgeTimes).

When every problem of DIR has a row from one GPU type, the summary `kb-corpus-<gpu>.json`
(metrics: problems, with_correct_seed (a share), searched, best_over_eager_median,
best_over_compile_median, share_beating_compile; the same `by_level`) is written to --out and,
for the default corpus, to benchmarks/results/. --cpu never writes a results file.
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import commit, write_results  # noqa: E402

from workbench.records import Problem, now_iso  # noqa: E402
from workbench.seeds.inductor import EXIT_CONTEXT_LOST  # noqa: E402

CORPUS = ROOT / "tests" / "problems" / "kb_corpus"
RESULTS = ROOT / "benchmarks" / "results"
ROWS = "kb-rows.jsonl"
#: This call's commit (and date), beside its rows: which earlier calls a --resume may take from.
CALL = "kb-call.json"
#: Earlier calls' captures at this commit, gathered by the parent for its shards.
RESUMED_CAPTURES = "kb-captures-resumed.jsonl"
#: A GPU process's searches in flight when its call ended (kb-inflight-<tag>.tar.xz): one SQLite
#: store per problem and a manifest (INFLIGHT_MANIFEST).
INFLIGHT_GLOB, INFLIGHT_MANIFEST = "kb-inflight-*.tar.xz", "inflight.json"
#: A file that comes back from a device call may not pass 16 MiB: stores past this are left out.
INFLIGHT_MAX_BYTES = 15 * 2**20


@functools.lru_cache(maxsize=1)
def this_commit() -> str:
    """The commit this process measures at (read once: rows of one call name one commit)."""
    return commit()


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def read_rows(*paths: Path | None) -> dict[str, dict]:
    """Rows by problem id from JSON-lines files (later files win; a torn last line is skipped)."""
    out: dict[str, dict] = {}
    for p in paths:
        if p is None or not Path(p).exists():
            continue
        for ln in Path(p).read_text().splitlines():
            try:
                row = json.loads(ln)
            except json.JSONDecodeError:
                continue
            if isinstance(row, dict) and "problem_id" in row:
                out[row["problem_id"]] = row
    return out


def append_row(path: Path, row: dict) -> None:
    """One line, one write (O_APPEND): rows from several processes never interleave."""
    data = (json.dumps(row) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


class OneAtATime:
    """A generator whose calls run one at a time across threads: Python 3.11's ast module (seeds
    are made and mutated through it) is not safe to use from several threads at once."""

    lock = threading.Lock()

    def __init__(self, gen):
        self.gen, self.name = gen, gen.name

    def seeds(self, problem):
        with self.lock:
            return self.gen.seeds(problem)

    def children(self, ctx):
        with self.lock:
            return self.gen.children(ctx)

    def generation_info(self, candidate_id):
        return self.gen.generation_info(candidate_id)


class JudgeTimes:
    """Where the judge's time went, per problem (the executor's `on_raw`): the measurements'
    statuses and the sums of their sessions' wall seconds by part (`phases_s`: waiting for the
    GPU's lock, setup, trials, warm-up, timed rounds, the whole session) and of their
    compile seconds. A row's `judge_s` is its problem's, for the calls since the search started
    in this process (a search carried from an earlier call counts this call's only)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.by_problem: dict[str, dict[str, float]] = {}

    def __call__(self, candidate, result: dict) -> None:
        with self.lock:
            got = self.by_problem.setdefault(candidate.problem_id, {})
            key = f"n_{result.get('status', '?')}"
            got[key] = got.get(key, 0) + 1
            parts = dict(result.get("phases_s") or {})
            parts.pop("gate", None)
            if isinstance(result.get("compile_s"), (int, float)):
                parts["compile"] = result["compile_s"]
            for k, v in parts.items():
                if isinstance(v, (int, float)):
                    got[k] = got.get(k, 0.0) + float(v)

    def pop(self, problem_id: str) -> dict[str, float]:
        with self.lock:
            got = self.by_problem.pop(problem_id, {})
        return {k: (round(v, 1) if isinstance(v, float) else v) for k, v in sorted(got.items())}


# =========================================================================== one problem
def search_row(problem: Problem, executor, forecaster, args, inductor: dict | None, store_dir: str,
               stop: threading.Event | None = None, carried: dict | None = None,
               live: dict | None = None, judge: JudgeTimes | None = None) -> dict[str, Any] | None:
    """Seed and search one problem; its row (see the module doc), or None when `stop` was set
    before the search ended: its store, registered in `live` under the problem's id as
    {"store": path, "search_id", "t0", "before_s", "calls"}, is then what save_inflight keeps
    for a later call. `carried`: an entry of load_inflight's (its "store" a file to continue
    from, "search_s" and "calls" so far)."""
    from workbench.search import MutationGenerator, SearchRun, ZooGenerator, make_method
    from workbench.search.selection import make_selector
    from workbench.seeds import seed_kind
    from workbench.store import Store

    row: dict[str, Any] = {"problem_id": problem.id, "level": problem.level, "gpu": executor.hardware.key,
                           "budget": args.budget, "commit": this_commit()}
    t0 = time.time()
    before_s, calls = float((carried or {}).get("search_s", 0.0)), int((carried or {}).get("calls", 0)) + 1
    source = (inductor or {}).get("source") if (inductor or {}).get("ok") else None
    gen = OneAtATime(MutationGenerator(ZooGenerator(inductor={problem.id: source} if source else None)))
    path = Path(store_dir) / f"{problem.id.replace('/', '_')}.sqlite"
    if carried:
        shutil.copyfile(carried["store"], path)
    with Store(path) as store:
        store.put_problem(problem)
        run = SearchRun(store, problem, executor, gen, forecaster, make_method(args.method, k=4, m=4),
                        budget=args.budget, seed=args.seed, selector=make_selector("puct"), max_seeds=args.max_seeds)
        try:
            run.resume(carried["search_id"]) if carried else run.start()
            if live is not None:
                live[problem.id] = {"store": str(path), "search_id": run.search_id, "t0": t0,
                                    "before_s": before_s, "calls": calls}
            if not _run_logged(run, problem.id, args.budget, t0, stop=stop):
                return None
        except Exception as e:  # noqa: BLE001 - a problem that cannot be searched is a row too
            return row | {"error": f"{type(e).__name__}: {str(e)[:400]}", "correct": False, "correct_seed": False,
                          "search_s": round(before_s + time.time() - t0, 1), "calls": calls}
        s = run.summary()
        seeds = {c.id: c for c in run.candidates.values() if c.parent_id is None and seed_kind(c.origin)}
        seed_ok = {cid: bool(run.measurements.get(cid) and run.measurements[cid].ok) for cid in seeds}
        best_seed = max((cid for cid, ok in seed_ok.items() if ok),
                        key=lambda cid: run.measurements[cid].speedup or 0.0, default=None)
        ok_any = any(m.ok for m in run.measurements.values())
    label = {cid: seed_kind(seeds[cid].origin) + f"#{i}" for i, cid in enumerate(seed_ok)}
    row.update(seeds={label[cid]: ok for cid, ok in seed_ok.items()},
               seed_kind=seed_kind(seeds[best_seed].origin) if best_seed else None,
               correct_seed=best_seed is not None, correct=ok_any, best_over_eager=s["best_speedup"],
               measurements=s["gpu_measurements"], finish_reason=s["finish_reason"], finished=bool(s["finished"]),
               inductor_seed=bool(source), search_s=round(before_s + time.time() - t0, 1), calls=calls)
    if not all(seed_ok.values()):  # why each seed that was not correct failed: the judge's status and reason
        row["seed_errors"] = {label[cid]: _why(run.measurements.get(cid)) for cid, ok in seed_ok.items() if not ok}
    if not source and inductor:
        row["inductor_error"] = (inductor.get("error") or "")[:300]
    if judge is not None:
        row["judge_s"] = judge.pop(problem.id)
    base = (inductor or {}).get("baseline") or {}
    row["compile"] = base
    if s["best_speedup"] and base.get("compile_speedup"):
        row["best_over_compile"] = s["best_speedup"] / base["compile_speedup"]
    return row


def _why(m) -> str:
    """A failed measurement's status and the start of its reason ("not measured" for none)."""
    if m is None:
        return "not measured"
    return f"{m.status.value}: {(m.reason or '').strip()[:300]}"


def _run_logged(run, pid: str, budget: int, t0: float, every: int = 8, quiet_s: float = 60.0,
                stop: threading.Event | None = None) -> bool:
    """`run` to its end, with a progress line every `every` GPU measurements or `quiet_s`
    seconds; then its pipelined candidates drained (SearchRun.run). False (the run left as it
    is) once `stop` is set."""
    mark_t, mark_n = time.time(), run.used
    while not (stop is not None and stop.is_set()) and run.step():
        if run.used - mark_n >= every or time.time() - mark_t >= quiet_s:
            best = run.archive.best_measured()
            log(f"  {pid}: {run.used}/{budget} measured, best {f'{best.speedup:.3f}x' if best else '-'} "
                f"({time.time() - t0:.0f} s)")
            mark_t, mark_n = time.time(), run.used
    if stop is not None and stop.is_set():
        return False
    run.run()
    return True


def save_inflight(live: dict[str, dict], dest: Path, max_bytes: int = INFLIGHT_MAX_BYTES) -> list[str]:
    """The searches in `live` (see search_row) as one archive at `dest`: a consistent copy of
    each store (SQLite's backup, while its search may still write) and the manifest; the ids
    saved. Stores that would take the archive past `max_bytes` are left out (logged)."""
    import sqlite3
    import tarfile

    work = Path(tempfile.mkdtemp(prefix="kb-inflight-"))
    manifest: dict[str, dict] = {}
    now = time.time()
    for pid, info in sorted(live.items()):
        name = Path(info["store"]).name
        src, dst = sqlite3.connect(info["store"]), sqlite3.connect(work / name)
        try:
            src.backup(dst)
        finally:
            src.close(), dst.close()
        manifest[pid] = {"store": name, "search_id": info["search_id"], "calls": info["calls"],
                         "search_s": round(info["before_s"] + now - info["t0"], 1)}
    while True:
        (work / INFLIGHT_MANIFEST).write_text(json.dumps(manifest, indent=1))
        tmp = dest.with_name(dest.name + ".part")
        with tarfile.open(tmp, "w:xz", preset=3) as tar:
            tar.add(work / INFLIGHT_MANIFEST, arcname=INFLIGHT_MANIFEST)
            for m in manifest.values():
                tar.add(work / m["store"], arcname=m["store"])
        if tmp.stat().st_size <= max_bytes or not manifest:
            os.replace(tmp, dest)
            break
        biggest = max(manifest, key=lambda p: (work / manifest[p]["store"]).stat().st_size)
        log(f"{biggest}: its store would take the in-flight archive past {max_bytes // 2**20} MiB; not carried")
        del manifest[biggest]
    shutil.rmtree(work, ignore_errors=True)
    return sorted(manifest)


def load_inflight(paths: list[Path], here: str, dest: Path) -> dict[str, dict]:
    """The searches in flight saved beside each of `paths` (earlier calls' rows) by calls at
    commit `here`, unpacked under `dest`: {problem id: manifest entry, "store" its file}; a
    later call's entry wins."""
    import tarfile

    got: dict[str, dict] = {}
    for i, p in enumerate(paths):
        folder = Path(p).parent
        try:
            if json.loads((folder / CALL).read_text()).get("commit") != here:
                continue
        except (OSError, ValueError):
            continue
        for j, arch in enumerate(sorted(folder.glob(INFLIGHT_GLOB))):
            into = dest / f"{i}-{j}"
            into.mkdir(parents=True, exist_ok=True)
            with tarfile.open(arch, "r:xz") as tar:
                tar.extractall(into, filter="data")
            for pid, m in json.loads((into / INFLIGHT_MANIFEST).read_text()).items():
                got[pid] = m | {"store": str(into / m["store"])}
    return got


# =========================================================================== a GPU's process
def run_shard(args) -> int:
    """Search the problems in args.problems_file on GPU args.gpu (see the module doc)."""
    from concurrent.futures import ThreadPoolExecutor

    from workbench.execution.executors import ChunkedExecutor, LocalGPUExecutor
    from workbench.execution.hardware import cpu_hardware

    problems = [Problem.from_dict(json.loads(ln)) for ln in Path(args.problems_file).read_text().splitlines() if ln]
    rows_path = Path(args.out) / ROWS
    tag = "cpu" if args.cpu else f"gpu{args.gpu}"
    judge = JudgeTimes()
    if args.cpu:
        executor = ChunkedExecutor(cpu_hardware(), device="cpu", workers=args.workers or 2, max_chunk=8,
                                   options={"time": True}, linger_s=2.0, on_raw=judge)
    else:
        executor = LocalGPUExecutor(gpus=[args.gpu], workers=args.workers or None, on_raw=judge)
    forecaster = make_forecaster(args, executor.hardware.key)
    captures = Path(args.out) / f"kb-captures-{tag}.jsonl"
    carried = read_rows(Path(args.out) / RESUMED_CAPTURES)
    have = read_rows(captures)
    for p in problems:                   # earlier calls' captures at this commit: not compiled again
        if p.id in carried and p.id not in have:
            append_row(captures, carried[p.id])
    capture_proc = None if args.cpu or args.no_inductor else start_capture(args, problems, captures, executor)
    deadline = args.t_start + args.time_budget_s
    per: list[float] = []
    lock = threading.Lock()
    store_dir = tempfile.mkdtemp(prefix=f"kb-{tag}-")
    going_on: dict[str, dict] = {}
    if args.inflight_dir:
        going_on = json.loads((Path(args.inflight_dir) / INFLIGHT_MANIFEST).read_text())
    # The searches carried from an earlier call first: they have spent part of their budget.
    problems.sort(key=lambda p: p.id not in going_on)
    stop = threading.Event()
    live: dict[str, dict] = {}

    def capture_of(pid: str, wait_until: float) -> dict | None:
        if capture_proc is None:
            return None
        while True:
            got = read_rows(captures).get(pid)
            if got is not None or time.time() > wait_until or not capture_proc.alive():
                return got
            time.sleep(1.0)

    def one(p: Problem) -> None:
        # With --carry-at-s a search cut by the call's end goes on in the next call, so a
        # problem may start late; without it, one expected to end past the deadline waits.
        expect = statistics.median(per) if per and not args.carry_at_s else 0.0
        if stop.is_set() or time.time() + expect > deadline:
            log(f"{tag}: {p.id} not started (time budget)")
            return
        cap = capture_of(p.id, min(deadline, time.time() + args.capture_wait_s))
        t0 = time.time()
        row = search_row(p, executor, forecaster, args, cap, store_dir, stop=stop, carried=going_on.get(p.id),
                         live=live, judge=judge)
        with lock:
            live.pop(p.id, None)
            if row is None:      # stopped: the snapshot has it
                return
            per.append(time.time() - t0)
            append_row(rows_path, row)
        log(f"{tag}: {p.id} seed={row.get('seed_kind')} correct={row.get('correct')} "
            f"best={row.get('best_over_eager')} vs_compile={row.get('best_over_compile')} "
            f"used={row.get('measurements')} ({row.get('search_s')} s){' ERROR ' + row['error'] if 'error' in row else ''}")

    def carry_at_end() -> None:
        """At --carry-at-s: save the searches in flight and end this process (the call's end)."""
        time.sleep(max(0.0, args.t_start + args.carry_at_s - time.time()))
        with lock:
            stop.set()
            snap = dict(live)
        saved = save_inflight(snap, Path(args.out) / f"kb-inflight-{tag}.tar.xz") if snap else []
        log(f"{tag}: {len(saved)} searches in flight saved for the next call"
            + (f" ({', '.join(saved)})" if saved else ""))
        if capture_proc is not None:
            capture_proc.stop()
        # The searches' threads may be waiting on a measurement: their chunks are given a few
        # seconds to end (the executor's close), then this process ends with them in flight.
        closing = threading.Thread(target=executor.close, daemon=True)
        closing.start()
        closing.join(timeout=20.0)
        os._exit(0)

    if args.carry_at_s:
        threading.Thread(target=carry_at_end, daemon=True).start()
    try:
        with ThreadPoolExecutor(max_workers=args.concurrent) as pool:
            list(pool.map(one, problems))
    finally:
        if capture_proc is not None:
            capture_proc.stop()
        executor.close()
    return 0


class _Capture:
    """The Inductor seed and baseline subprocess of one GPU, restarted past a problem it died on
    and after a problem that left its CUDA context unusable (`EXIT_CONTEXT_LOST`)."""

    def __init__(self, args, problems: list[Problem], out: Path, lock_path: str | None):
        self.args, self.problems, self.out, self.lock_path = args, problems, out, lock_path
        self.proc: subprocess.Popen | None = None
        self.skip: list[str] = []
        self.done = False
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        todo_file = Path(tempfile.mkdtemp(prefix="kb-capture-")) / "todo.jsonl"  # not under --out: few files return
        todo_file.write_text("".join(json.dumps(p.to_dict()) + "\n" for p in self.problems))
        # Inductor's parallel compile pool, one per GPU process: a few threads each, not every core.
        env = dict(os.environ, CUDA_VISIBLE_DEVICES=str(self.args.gpu), PYTHONPATH=str(ROOT),
                   TORCHINDUCTOR_COMPILE_THREADS=str(self.args.compile_threads))
        while not self.done:
            have = read_rows(self.out)
            left = [p.id for p in self.problems if p.id not in have and p.id not in self.skip]
            if not left:
                break
            self.proc = subprocess.Popen(self.command(todo_file, list(have) + self.skip), env=env, cwd=str(ROOT))
            rc = self.proc.wait()
            if rc == EXIT_CONTEXT_LOST and not self.done:
                log(f"gpu{self.args.gpu}: the Inductor process lost its CUDA context; starting a fresh one")
                continue   # its last problem has its row: the next process starts after it
            if rc != 0 and not self.done:  # it died on the first problem it had not finished
                have = read_rows(self.out)
                dead = next((pid for pid in left if pid not in have), None)
                if dead is None:
                    break
                log(f"gpu{self.args.gpu}: the Inductor process died on {dead} (exit {rc}); going on without it")
                append_row(self.out, {"problem_id": dead, "ok": False, "error": f"capture process died (exit {rc})"})
        self.done = True

    def command(self, todo_file: Path, skip: list[str]) -> list[str]:
        """The capture process's command line for the problems in `todo_file` less `skip`."""
        cmd = [sys.executable, "-m", "workbench.seeds.inductor", str(todo_file), str(self.out), "--baselines",
               "--skip", ",".join(skip)]
        return cmd + (["--gpu-lock", self.lock_path] if self.lock_path else [])

    def alive(self) -> bool:
        return not self.done

    def stop(self) -> None:
        self.done = True
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()


def start_capture(args, problems: list[Problem], out: Path, executor) -> _Capture:
    lock_dir = getattr(executor, "_lock_dir", None)
    lock_path = os.path.join(lock_dir, f"gpu{args.gpu}.lock") if lock_dir else None
    return _Capture(args, problems, out, lock_path)


def make_forecaster(args, hardware_key: str):
    """The searches' forecaster: roofline, or the learned one fitted on the shipped data of this
    GPU (falling back to roofline when there is none)."""
    from workbench.forecast.roofline import RooflineForecaster

    if args.forecaster == "roofline" or args.method == "measure_all":
        return RooflineForecaster()
    from workbench.dataset.shipped import load_shipped
    from workbench.forecast.fitted import fit_or_load

    problems, candidates, measurements = load_shipped(None)
    ms = [m for m in measurements if m.hardware_key == hardware_key]
    if not ms:
        log(f"no shipped measurements for {hardware_key}: the roofline forecaster searches")
        return RooflineForecaster()
    return fit_or_load(problems, candidates, ms, hardware_key=hardware_key,
                       cache_dir=os.path.join(tempfile.gettempdir(), "kb-bench-fit"))


# =========================================================================== the parent
def _median(xs: list[float]) -> float | None:
    return float(statistics.median(xs)) if xs else None


def metrics(rows: list[dict]) -> dict[str, Any]:
    """The summary metrics of `rows` (see the module doc)."""
    n = len(rows)
    eager = [r["best_over_eager"] for r in rows if r.get("correct") and r.get("best_over_eager")]
    vs_compile = [r["best_over_compile"] for r in rows if r.get("best_over_compile")]
    return {
        "problems": n,
        "with_correct_seed": (sum(1 for r in rows if r.get("correct_seed")) / n) if n else None,
        "with_correct_candidate": (sum(1 for r in rows if r.get("correct")) / n) if n else None,
        "searched": sum(1 for r in rows if r.get("finished")),
        "best_over_eager_median": _median(eager),
        "best_over_compile_median": _median(vs_compile),
        "share_beating_compile": (sum(1 for v in vs_compile if v > 1.0) / len(vs_compile)) if vs_compile else None,
        "seed_kinds": {k: sum(1 for r in rows if (r.get("seed_kind") or "none") == k)
                       for k in sorted({r.get("seed_kind") or "none" for r in rows})},
    }


def summary(problems: list[Problem], rows: dict[str, dict], args) -> dict[str, Any] | None:
    """The results document when every problem has a row from one GPU type and one commit, else None."""
    mine = [rows[p.id] for p in problems if p.id in rows]
    gpus = {r.get("gpu") for r in mine}
    if len(mine) != len(problems) or len(gpus) != 1 or len({r.get("commit") for r in mine}) != 1:
        return None
    budgets = {r.get("budget") for r in mine}
    levels = sorted({r["level"] for r in mine})
    return {
        "benchmark": "kb_bench", "gpu": gpus.pop(), "date": now_iso(), "commit": mine[0].get("commit") or commit(),
        "metrics": metrics(mine) | {"by_level": {f"level{lv}": metrics([r for r in mine if r["level"] == lv])
                                                  for lv in levels}},
        "definitions": {
            "with_correct_seed": "share of problems with at least one seed the executor measured correct",
            "searched": "problems whose search ran to its end (budget spent or generator exhausted)",
            "best_over_eager_median": "median over problems with a correct candidate of the best measured speedup "
                                      "over the eager reference",
            "best_over_compile_median": "median of the best speedup divided by torch.compile's speedup over eager "
                                        "(default mode, static shapes, no CUDA graphs, timed in the same run)",
            "share_beating_compile": "share of those problems whose best candidate beats torch.compile",
        },
        "settings": {"budgets": sorted(b for b in budgets if b is not None), "method": args.method,
                     "forecaster": args.forecaster, "seed": args.seed, "folder": str(args.folder)},
        "per_problem": {r["problem_id"]: r for r in mine},
    }


def resumable(paths: list[Path], here: str) -> tuple[dict[str, dict], int]:
    """Rows of `paths` (earlier calls' kb-rows.jsonl) measured at commit `here`, and how many
    rows of another commit (or none named) were left out."""
    rows = read_rows(*paths)
    mine = {pid: r for pid, r in rows.items() if r.get("commit") == here}
    return mine, len(rows) - len(mine)


def carry_captures(paths: list[Path], here: str, dest: Path) -> int:
    """The Inductor captures (kb-captures-*.jsonl) beside each of `paths` whose call (its
    kb-call.json) ran at commit `here`, written to `dest`; how many problems."""
    got: dict[str, dict] = {}
    for p in paths:
        folder = Path(p).parent
        try:
            call = json.loads((folder / CALL).read_text())
        except (OSError, ValueError):
            continue
        if call.get("commit") != here:
            continue
        for f in sorted(folder.glob("kb-captures-*.jsonl")):
            # A capture process that died (or was killed with its call) is tried again.
            got.update({pid: r for pid, r in read_rows(f).items()
                        if not str(r.get("error", "")).startswith("capture process died")})
    dest.write_text("".join(json.dumps(r) + "\n" for r in got.values()))
    return len(got)


def run_parent(args) -> int:
    from workbench.problems import load_dir
    from workbench.problems.loader import ProblemFileError

    t_start = time.time()
    try:
        problems, errors = load_dir(args.folder)
    except ProblemFileError as e:
        raise SystemExit(f"kb_bench: {e}") from None
    out = Path(args.out or tempfile.mkdtemp(prefix="kb-bench-"))
    out.mkdir(parents=True, exist_ok=True)
    rows_path = out / ROWS
    for e in errors:
        log(f"not loaded: {e}")
    if not problems:
        raise SystemExit(f"no problem of {args.folder} loaded ({len(errors)} files failed, above)"
                         if errors else f"no problem files under {args.folder} (levelN/*.py)")
    if args.every > 1:
        problems = problems[:: args.every]
    if args.limit:
        problems = problems[: args.limit]
    here = this_commit()
    (out / CALL).write_text(json.dumps({"commit": here, "date": now_iso()}) + "\n")
    previous, foreign = resumable(args.resume or [], here)
    if foreign:
        log(f"{foreign} resumed rows of another commit left out (measured again at {here[:10]})")
    carry_captures(args.resume or [], here, out / RESUMED_CAPTURES)
    have = read_rows(rows_path)
    for pid, row in previous.items():  # the output file is cumulative across calls
        if pid not in have:
            append_row(rows_path, row)
    done = set(previous) | set(have)
    todo = [p for p in problems if p.id not in done]
    inflight_dir = Path(tempfile.mkdtemp(prefix="kb-going-on-"))
    going_on = {pid: m for pid, m in load_inflight(args.resume or [], here, inflight_dir).items()
                if pid in {p.id for p in todo}}
    (inflight_dir / INFLIGHT_MANIFEST).write_text(json.dumps(going_on))
    todo.sort(key=lambda p: p.id not in going_on)   # stable: the searches to go on with first
    log(f"{len(problems)} problems, {len(done & {p.id for p in problems})} done before, {len(todo)} to do"
        + (f" ({len(going_on)} of them searches to go on with)" if going_on else ""))
    if args.summarize is None and todo:
        gpus = [None] if args.cpu else (args.gpus or list(range(_gpu_count())))
        shards = {g: todo[i::len(gpus)] for i, g in enumerate(gpus)}
        procs = []
        for g, ps in shards.items():
            if not ps:
                continue
            pf = Path(tempfile.mkdtemp(prefix="kb-shard-")) / "todo.jsonl"
            pf.write_text("".join(json.dumps(p.to_dict()) + "\n" for p in ps))
            cmd = [sys.executable, str(Path(__file__).resolve()), str(args.folder), "--shard", "--problems-file",
                   str(pf), "--out", str(out), "--budget", str(args.budget), "--method", args.method,
                   "--forecaster", args.forecaster, "--seed", str(args.seed), "--concurrent", str(args.concurrent),
                   "--max-seeds", str(args.max_seeds), "--time-budget-s", str(args.time_budget_s),
                   "--t-start", str(t_start), "--capture-wait-s", str(args.capture_wait_s)]
            cmd += ["--cpu"] if args.cpu else ["--gpu", str(g)]
            cmd += ["--workers", str(args.workers)] if args.workers else []
            cmd += ["--no-inductor"] if args.no_inductor else []
            cmd += ["--compile-threads", str(args.compile_threads)]
            cmd += ["--carry-at-s", str(args.carry_at_s)] if args.carry_at_s else []
            cmd += ["--inflight-dir", str(inflight_dir)] if any(p.id in going_on for p in ps) else []
            procs.append(subprocess.Popen(cmd, env=dict(os.environ, PYTHONPATH=str(ROOT)), cwd=str(ROOT)))
            log(f"shard {g}: {len(ps)} problems")
        for p in procs:
            p.wait()
    rows = read_rows(rows_path, *(args.summarize or []))
    doc = summary(problems, rows, args)
    left = [p.id for p in problems if p.id not in rows]
    log(f"{time.time() - t_start:.0f} s; {len(rows)} rows; {len(left)} problems left" + (f" ({', '.join(left[:8])}...)" if left else ""))
    if doc is None:
        log("no summary: not every problem has a row from one GPU type and one commit yet (run again with --resume)")
        print(json.dumps(metrics([rows[p.id] for p in problems if p.id in rows]), indent=2))
        return 0
    text = json.dumps(doc, indent=2) + "\n"
    if args.cpu:
        print(json.dumps(doc["metrics"], indent=2))
        return 0
    full = Path(args.folder).resolve() == CORPUS.resolve() and not args.limit and args.every == 1
    for p in write_results(RESULTS, f"kb-corpus-{doc['gpu']}.json", text, full, str(out),
                           "partial run (--limit or another folder): no results file written"):
        log(f"wrote {p}")
    print(json.dumps(doc["metrics"], indent=2))
    return 0


def _gpu_count() -> int:
    out = subprocess.run([sys.executable, "-c", "import torch; print(torch.cuda.device_count())"],
                         capture_output=True, text=True, timeout=120)
    n = int(out.stdout.strip() or 0)
    if not n:
        raise SystemExit("no CUDA GPU: run with --cpu for the smoke path")
    return n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("folder", type=Path, nargs="?", default=CORPUS, help="KernelBench-layout folder (levelN/*.py)")
    ap.add_argument("--out", default=None, help="where rows, captures and the summary go (e.g. $OUT)")
    ap.add_argument("--resume", action="append", type=Path, help="rows of a previous call (repeatable)")
    ap.add_argument("--summarize", nargs="+", type=Path, default=None, metavar="ROWS",
                    help="only summarise these rows files (every call's kb-rows.jsonl; later files win; no GPU)")
    ap.add_argument("--budget", type=int, default=32, help="GPU measurements per problem, seeds included")
    ap.add_argument("--method", default="screen_topk", choices=("screen_topk", "measure_all"))
    ap.add_argument("--forecaster", default="roofline", choices=("roofline", "learned"))
    ap.add_argument("--max-seeds", type=int, default=4, help="seeds measured first (the search starts from the best)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--gpus", type=lambda s: [int(x) for x in s.split(",")], default=None)
    ap.add_argument("--workers", type=int, default=0, help="executor workers per GPU (default: the executor's)")
    ap.add_argument("--concurrent", type=int, default=4, help="problems searched at once per GPU")
    ap.add_argument("--time-budget-s", type=float, default=500.0,
                    help="no problem starts once its expected end passes this many seconds after the start")
    ap.add_argument("--carry-at-s", type=float, default=None,
                    help="this many seconds after the start, save the searches in flight to --out and end "
                         "(a --resume from it continues them)")
    ap.add_argument("--capture-wait-s", type=float, default=120.0,
                    help="how long a search waits for its problem's Inductor seed")
    ap.add_argument("--no-inductor", action="store_true", help="no Inductor seeds and no torch.compile baseline")
    ap.add_argument("--limit", type=int, default=0, help="only the first N problems")
    ap.add_argument("--every", type=int, default=1, help="only every Nth problem (a smoke run over all kinds)")
    ap.add_argument("--compile-threads", type=int, default=8, help="Inductor compile threads per GPU process")
    ap.add_argument("--cpu", action="store_true", help="smoke run on the CPU (interpreter); no results file")
    ap.add_argument("--shard", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--problems-file", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--inflight-dir", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--gpu", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--t-start", type=float, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.budget < 1:
        raise SystemExit("--budget must be at least 1")
    if args.shard:
        args.t_start = args.t_start or time.time()
        return run_shard(args)
    return run_parent(args)


if __name__ == "__main__":
    sys.exit(main())
