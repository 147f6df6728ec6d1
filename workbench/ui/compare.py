"""Compare search methods on one problem at an equal GPU budget: does the forecaster save GPU
measurements here? The logic of the app's Compare tab (no Panel), over the library:
`compose.build` runs each search, `workbench.landscape.orders` gives the two reference orders
of the whole space and reads every curve against the space's global best.

Where the measurements come from (`find_space`):
- a landscape (`kernels_cache/landscapes/<gpu>/`): the problem's whole kernel family measured
  on that GPU; searches draw children from the stored neighbourhoods (`LandscapeGenerator`),
  and the global best is the best of every point;
- a recording: the database's measurements of the problem on that GPU (the shipped data);
  searches replay them (`ReplayGenerator`), and the "global best" is the best recorded kernel;
- live: no recording, a GPU here (or a Ray cluster): each search measures for real, as the
  Search tab's would; there is no global best to show.

Every method gets the same budget, seed and seed kernels. Methods: measure_all, screen_topk with
the chosen forecaster and with random scores (`RandomForecaster`, the control), selective,
uncertainty_aware, and the two orders of the whole space (ranked by the forecaster's expected
log2 speedup, and random), which are no search at all. Replayed searches run in a scratch
database (`scratch`), never the app's: a comparison adds no search, candidate or measurement to
the data the Search tab, the Dataset tab and the learned forecaster's fit read. A live comparison
measures for real and stores its measurements in the app's database like any live search.

"Saved" measurements: the budget minus the measurements a method needed to come within
`orders.WITHIN_REL` of the reference best (the global best where known, else the best any method
found); None when it never came within it.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Sequence

from workbench.errors import ConfigError, WorkbenchError
from workbench.landscape.orders import (WITHIN_REL, best_so_far, forecast_scores, global_best,
                                        measurements_to_within, random_order, ranked_order)

#: What each method is, as the view lists it.
METHODS: dict[str, str] = {
    "measure_all": "measure_all: k children per parent, all measured (no forecaster)",
    "screen_topk": "screen_topk: m*k children forecast, the top k measured",
    "screen_topk[random]": "screen_topk with random scores (the control)",
    "ranked_order": "the whole space in the forecaster's order, best first (no search)",
    "random_order": "the whole space in a random order (no search)",
    "selective": "selective: confident forecasts trusted, the rest measured",
    "uncertainty_aware": "uncertainty_aware: trust certified no-gain children, measure the rest",
}
DEFAULT_METHODS = ("measure_all", "screen_topk", "screen_topk[random]", "ranked_order")
ORDERS = ("ranked_order", "random_order")
NEEDS_FORECASTER = ("screen_topk", "ranked_order", "selective", "uncertainty_aware")
FORECASTERS = ("learned", "roofline")
LANDSCAPES_DIR = Path(__file__).resolve().parents[2] / "kernels_cache" / "landscapes"


@dataclass(frozen=True)
class CompareRequest:
    """problem_id; target: a target string (replay:h200, cuda:0, ...); budget in GPU
    measurements; methods (keys of METHODS); forecaster: learned or roofline; seed; k and m."""

    problem_id: str
    target: str
    budget: int
    methods: tuple[str, ...] = DEFAULT_METHODS
    forecaster: str = "learned"
    seed: int = 0
    k: int = 4
    m: int = 4

    def __post_init__(self):
        unknown = [x for x in self.methods if x not in METHODS]
        if unknown or not self.methods:
            raise ConfigError(f"pick methods to compare from: {', '.join(METHODS)}"
                              + (f" (unknown: {', '.join(unknown)})" if unknown else ""))
        if self.forecaster not in FORECASTERS:
            raise ConfigError(f"the Compare tab's forecaster is one of {', '.join(FORECASTERS)}")
        if int(self.budget) < 1:
            raise ConfigError("a comparison needs a budget of at least 1 GPU measurement")


@dataclass
class Curve:
    """One method's result: `points` (GPU measurements, best speedup so far) at each improvement,
    `spent` measurements, `considered` candidates, `trusted` forecasts that stood in,
    `to_reference` measurements to come within WITHIN_REL of the reference best (None: never)."""

    method: str
    points: list[tuple[int, float]]
    spent: int
    considered: int = 0
    trusted: int = 0
    to_reference: int | None = None
    search_id: str = ""
    note: str = ""

    @property
    def best(self) -> float | None:
        return self.points[-1][1] if self.points else None

    def saved(self, budget: int) -> int | None:
        """GPU measurements of the budget left once within reach of the reference best."""
        return None if self.to_reference is None else budget - self.to_reference


@dataclass
class Comparison:
    request: CompareRequest
    source: str                    # "landscape", "recording" or "live"
    gpu: str                       # GPU key
    space_size: int                # candidates with a recording (0 live)
    global_best: float | None      # best of the space (None live)
    reference_best: float | None   # global best, else the best any method found
    curves: list[Curve] = field(default_factory=list)
    seconds: float = 0.0
    forecaster: str = ""


@dataclass
class Space:
    """A problem's measured candidates on one GPU and how searches replay them."""

    problem: Any
    gpu: str
    source: str
    candidates: list                   # Candidate records with a recording
    measurements: list                 # their Measurement records on `gpu`
    generator: Callable[[set[str]], Any]  # measured ids -> a fresh generator

    @property
    def speedups(self) -> dict[str, float | None]:
        return {m.candidate_id: (m.speedup if m.ok else None) for m in self.measurements}


def landscape_dirs(root: Path = LANDSCAPES_DIR) -> dict[str, Path]:
    """GPU key -> the landscape directory for it (those holding points.parquet)."""
    if not root.is_dir():
        return {}
    return {d.name: d for d in sorted(root.iterdir()) if (d / "points.parquet").exists()}


@lru_cache(maxsize=4)
def _landscape_data(directory: str, mtime: float):
    """The landscapes and records of a directory, read once per process (warm comparisons)."""
    from workbench.dataset.shipped import load_shipped
    from workbench.landscape import read_landscapes

    return read_landscapes(directory), load_shipped(directory)


def landscape_problems(root: Path = LANDSCAPES_DIR) -> dict[str, dict[str, int]]:
    """GPU key -> {problem id: points} of the stored landscapes (reads only points.parquet)."""
    import collections

    import pyarrow.parquet as pq

    out = {}
    for gpu, d in landscape_dirs(root).items():
        rows = pq.read_table(d / "points.parquet", columns=["problem_id"]).column("problem_id").to_pylist()
        out[gpu] = dict(sorted(collections.Counter(rows).items()))
    return out


def find_space(store, problem, gpu: str, root: Path = LANDSCAPES_DIR) -> Space | None:
    """The problem's landscape on `gpu` if one is stored, else the database's recording of it
    on `gpu`, else None (a live comparison)."""
    from workbench.landscape import LandscapeGenerator
    from workbench.search import ReplayGenerator

    d = landscape_dirs(root).get(gpu)
    if d is not None:
        lands, rs = _landscape_data(str(d), (d / "kernels.parquet").stat().st_mtime)
        land = lands.get(problem.id)
        if land is not None:
            ms = [m for m in rs.measurements if m.problem_id == problem.id and m.hardware_key == gpu]
            have = {m.candidate_id for m in ms}
            cands = [c for c in land.candidates if c.id in have]
            if cands:
                return Space(problem, gpu, "landscape", cands, ms,
                             lambda ids, land=land: LandscapeGenerator([land], ids))
    ms = store.measurements(problem_id=problem.id, hardware_key=gpu)
    if not ms:
        return None
    have = {m.candidate_id for m in ms}
    cands = [c for c in store.candidates(problem_id=problem.id) if c.id in have]
    return Space(problem, gpu, "recording", cands, ms,
                 lambda ids, cands=cands: ReplayGenerator(cands, ids))


def _per_measurement(points: Sequence[tuple[int, float]], spent: int) -> list[float]:
    """A best-so-far value after every measurement (NaN before the first correct one)."""
    out, best, j = [], math.nan, 0
    for n in range(1, spent + 1):
        while j < len(points) and points[j][0] <= n:
            best = points[j][1]
            j += 1
        out.append(best)
    return out


def _improvements(curve: Sequence[float]) -> list[tuple[int, float]]:
    out: list[tuple[int, float]] = []
    for i, v in enumerate(curve):
        if math.isfinite(v) and (not out or v > out[-1][1]):
            out.append((i + 1, v))
    return out


class Comparer:
    """Runs one `CompareRequest` (see the module doc). `progress(text)` hears each stage;
    `gate` (workbench.ui.interrupt.Gate) cancels it at once; `forecaster`, when given to `run`,
    is used instead of making one. `made`: forecasters made by earlier comparisons of one owner
    (a view's runner: never shared between threads), by (database version, problem, GPU,
    forecaster name), reused while the database does not change."""

    def __init__(self, store, scratch, progress: Callable[[str], None] | None = None, gate=None,
                 root: Path = LANDSCAPES_DIR, made: dict | None = None):
        from workbench.ui.interrupt import Gate

        self.store, self.scratch, self.root = store, scratch, root
        self.made = made if made is not None else {}
        self.say = progress or (lambda _m: None)
        self.gate = gate or Gate()

    def forecaster_for(self, req: CompareRequest, problem, gpu: str):
        """The chosen forecaster: roofline, or the learned one the Search tab would use for this
        problem (fitted on the database's other problems; fitted in a child process when the
        cache of fitted forecasters does not hold it, so Cancel kills the fit). Kept for the next
        comparison of the same problem and GPU while the database does not change."""
        from workbench import compose
        from workbench.spec import SearchSpec
        from workbench.ui.jobs import ChildJob
        from workbench.ui.tasks import needs_fit

        key = (self.store.version(), problem.id, gpu, req.forecaster)
        if key in self.made:
            return self.made[key]
        spec = SearchSpec(problem.id, target=f"replay:{gpu}", forecaster=req.forecaster, budget=req.budget)
        if self.gate.call(needs_fit, spec, self.store, problem.id, gpu):
            self.say("fitting the learned forecaster in a child process (Cancel kills it)...")
            ChildJob("workbench.ui.tasks:prefit_forecaster",
                     {"db": str(self.store.path), "spec": spec.to_dict(), "hardware_key": gpu}, self.say).run(self.gate)
        fc = self.gate.call(compose.make_forecaster, spec, self.store, problem, gpu, progress=self.say)
        self.made[key] = fc
        while len(self.made) > 4:  # a few problems' forecasters; the fit cache on disk keeps the rest
            self.made.pop(next(iter(self.made)))
        return fc

    def run(self, req: CompareRequest, forecaster: Any = None) -> Comparison:
        from workbench.problems.registry import resolve
        from workbench.spec import Target

        t0 = time.perf_counter()
        target = Target.parse(req.target)
        problem = resolve(req.problem_id, store=self.store)
        gpu = target.key if target.replay else ""
        space = find_space(self.store, problem, gpu, self.root) if target.replay else None
        if target.replay and space is None:
            raise ConfigError(f"no landscape and no recorded measurements of {problem.id} on {gpu.upper()}: "
                              "pick a problem listed for that GPU, or compare live on a machine with a GPU")
        needs_fc = any(x in NEEDS_FORECASTER for x in req.methods)
        if not target.replay:
            return self._live(req, problem, forecaster if needs_fc else None, t0)
        if needs_fc and forecaster is None:
            forecaster = self.forecaster_for(req, problem, gpu)
        self.scratch.put_problems([problem])
        self.scratch.put_candidates(space.candidates)
        self.scratch.put_measurements(space.measurements)  # every method sees the same recorded prior
        best = global_best(space.speedups)
        out = Comparison(req, space.source, gpu, len(space.candidates), best if math.isfinite(best) else None,
                         None, forecaster=getattr(forecaster, "name", "") if needs_fc else "")
        for i, method in enumerate(req.methods):
            self.say(f"{i + 1} of {len(req.methods)}: {method} on {space.source} of {problem.id} ({gpu.upper()})")
            if method in ORDERS:
                out.curves.append(self._order(req, space, method, forecaster))
            else:
                out.curves.append(self._search(req, space, method, forecaster))
        self._score(out)
        out.seconds = time.perf_counter() - t0
        self.say(f"done in {out.seconds:.1f} s")
        return out

    def _order(self, req: CompareRequest, space: Space, method: str, forecaster) -> Curve:
        ids = [c.id for c in space.candidates]
        if method == "ranked_order":
            from workbench.execution.executors import CacheExecutor

            hw = CacheExecutor(space.measurements, space.gpu).hardware
            scores = self.gate.call(forecast_scores, forecaster, space.problem, space.candidates, hw)
            order = ranked_order(ids, scores)
        else:
            order = random_order(ids, req.seed, salt=space.problem.id)
        curve = best_so_far(order, space.speedups, req.budget)
        return Curve(method, _improvements(curve), len(curve), considered=len(curve),
                     note="no search: the space measured in this order")

    def _search(self, req: CompareRequest, space: Space, method: str, forecaster) -> Curve:
        from workbench import compose
        from workbench.execution.executors import CacheExecutor
        from workbench.forecast.controls import RandomForecaster
        from workbench.search.events import decode_all
        from workbench.search.loop import best_curve
        from workbench.spec import SearchSpec
        from workbench.ui.interrupt import gate_run

        base = method.split("[")[0]
        fc = None if base == "measure_all" else (RandomForecaster(seed=req.seed) if method.endswith("[random]")
                                                 else forecaster)
        from workbench.spec import MethodChoice

        # The stored spec names the chosen forecaster; a control's run config names "random".
        spec = SearchSpec(space.problem.id, target=f"replay:{space.gpu}",
                          forecaster="none" if fc is None else req.forecaster,
                          method=MethodChoice(base, k=req.k, m=1 if base == "measure_all" else req.m),
                          budget=req.budget, seed=req.seed)
        ex = CacheExecutor(space.measurements, space.gpu)
        run = compose.build(spec, self.scratch, executor=ex, problem=space.problem,
                            generator=space.generator(ex.candidate_ids), forecaster=fc)
        run.name = f"compare:{method}"
        gate_run(run, self.gate)
        summary = run.run()
        events = decode_all(self.scratch.events(run.search_id))
        return Curve(method, best_curve(events), summary["gpu_measurements"],
                     considered=summary["candidates_considered"], trusted=summary["trusted"],
                     search_id=run.search_id or "", note=summary.get("finish_reason", ""))

    def _live(self, req: CompareRequest, problem, forecaster, t0: float) -> Comparison:
        """Each method a live search of the app's database (orders need a known space: left out)."""
        from workbench import compose
        from workbench.search.events import decode_all
        from workbench.search.loop import best_curve
        from workbench.spec import SearchSpec
        from workbench.ui.interrupt import gate_run
        from workbench.ui.runner import app_spec

        out = Comparison(req, "live", "", 0, None, None)
        for i, method in enumerate(req.methods):
            if method in ORDERS:
                out.curves.append(Curve(method, [], 0, note="left out: live, the space is not enumerated"))
                continue
            self.say(f"{i + 1} of {len(req.methods)}: {method}, live on {req.target}")
            base = method.split("[")[0]
            fc_name = "none" if base == "measure_all" else req.forecaster
            spec: SearchSpec = app_spec(problem.id, req.target, base, fc_name, req.budget, seed=req.seed, k=req.k,
                                        m=req.m)
            kw: dict[str, Any] = {}
            if method.endswith("[random]"):
                from workbench.forecast.controls import RandomForecaster

                kw["forecaster"] = RandomForecaster(seed=req.seed)
            run = self.gate.call(compose.build, spec, self.store, problem=problem, progress=self.say, **kw)
            gate_run(run, self.gate)
            try:
                summary = run.run()
            finally:
                ex = getattr(run.executor, "close", None)
                if ex is not None:
                    ex()
            events = decode_all(self.store.events(run.search_id))
            out.gpu = run.hardware.key
            out.curves.append(Curve(method, best_curve(events), summary["gpu_measurements"],
                                    considered=summary["candidates_considered"], trusted=summary["trusted"],
                                    search_id=run.search_id or "", note=summary.get("finish_reason", "")))
        self._score(out)
        out.seconds = time.perf_counter() - t0
        return out

    @staticmethod
    def _score(out: Comparison) -> None:
        found = [c.best for c in out.curves if c.best is not None]
        out.reference_best = out.global_best if out.global_best is not None else (max(found) if found else None)
        if out.reference_best is None:
            return
        for c in out.curves:
            per = _per_measurement(c.points, c.spent)
            c.to_reference = measurements_to_within(per, out.reference_best, WITHIN_REL, out.request.budget)


class CompareRunner:
    """One comparison at a time in a daemon thread: `start(req)`, `cancel()`; `phase` (idle,
    running, done, cancelled, failed), `message`, `result` (a Comparison), `error`."""

    def __init__(self, store, scratch, root: Path = LANDSCAPES_DIR):
        self.store, self.scratch, self.root = store, scratch, root
        self.phase, self.message, self.error = "idle", "", ""
        self.result: Comparison | None = None
        self.version = 0  # bumped on every change the view should redraw for
        self._made: dict = {}  # forecasters of earlier comparisons (Comparer.made)
        self._gate = None
        self._future = None

    def _say(self, text: str) -> None:
        self.message = text
        self.version += 1

    def start(self, req: CompareRequest) -> None:
        from workbench.ui.interrupt import Gate, in_helper

        if self._future is not None and not self._future.done():
            raise ConfigError("a comparison is running: cancel it first")
        self._gate = gate = Gate()
        self.phase, self.error, self.result = "running", "", None
        self._say("starting...")

        def target() -> None:
            from workbench.ui.interrupt import Interrupted

            try:
                res = Comparer(self.store, self.scratch, self._say, gate, self.root, self._made).run(req)
                self.result, self.phase = res, "done"
            except Interrupted:
                self.phase = "cancelled"
            except Exception as e:  # noqa: BLE001 - shown in the view
                if gate.closed:
                    self.phase = "cancelled"
                else:
                    self.error = str(e) if isinstance(e, WorkbenchError) else f"{type(e).__name__}: {e}"
                    self.phase = "failed"
            self.version += 1

        # On the shared helper threads (workbench.ui.interrupt): a thread of its own per comparison
        # would open a database connection of its own each time.
        self._future = in_helper(target)

    def cancel(self) -> None:
        if self._gate is not None and self.phase == "running":
            self._gate.close()
            self.phase = "cancelled"
            self._say("cancelled")

    def join(self, timeout: float | None = None) -> None:
        if self._future is not None:
            try:
                self._future.result(timeout)
            except Exception:  # noqa: BLE001 - the comparison reports its own errors; a timeout just returns
                pass
