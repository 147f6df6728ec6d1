"""`workbench search`: run, resume or list kernel searches.

    workbench search --problem L1/01_softmax --gpu replay:h100 --method screen_topk \
        --budget 40 --forecaster learned --seed 0
    workbench search --resume SEARCH_ID ...same options...
    workbench search --list
"""
from __future__ import annotations

import sys
from typing import Any

from workbench.commands.common import (add_executor_options, add_llm_options, db_path, llm_client,
                                       ray_executor, table)
from workbench.errors import ConfigError
from workbench.search.methods import METHODS

FORECASTERS = ("learned", "roofline", "llm", "none")
GENERATORS = ("auto", "mutation", "replay", "llm", "llm-guided")


def register(sub) -> None:
    p = sub.add_parser("search", help="run an evolutionary kernel search with a forecaster as surrogate",
                       description="Search for faster kernels of one problem. The budget counts GPU "
                       "measurements; every event is stored, so a run can be watched, stopped (Ctrl-C) "
                       "and resumed with --resume.")
    p.add_argument("--problem", help="problem id (L1/01_softmax, an imported L1/19_ReLU) or unique name")
    from workbench.problems.registry import add_problem_file_option

    add_problem_file_option(p)
    p.add_argument("--gpu", default="replay:h100",
                   help="cuda:N (measure on local GPU N), cpu (Triton interpreter), or replay:KEY "
                   "(answer from recorded measurements of GPU type KEY, e.g. replay:h100)")
    p.add_argument("--method", choices=METHODS, default="screen_topk")
    p.add_argument("--budget", type=int, default=40, help="GPU measurements allowed, seeds included")
    p.add_argument("--forecaster", choices=FORECASTERS, default="learned",
                   help="learned: fit on the database's measurements of other problems; roofline; "
                   "llm: the server of --llm-base-url / --llm-model; none: only with measure_all")
    p.add_argument("--forecaster-path", help="a saved LearnedForecaster to load instead of fitting one")
    p.add_argument("--cache-dir", help="where fitted learned forecasters are cached and reused (default "
                   "$WORKBENCH_CACHE_DIR, else ~/.cache/gpu-forecasters-workbench); the folder must be "
                   "your own: entries are pickles")
    p.add_argument("--reference-time", choices=("estimate", "measured"), default="measured",
                   help="the fitted learned forecaster's reference time: measured on the GPU "
                   "(default: the database's earlier measurements of the problem there when the run "
                   "starts, the run's own once a kernel is measured, the estimate before either) or "
                   "only the analytic estimate")
    p.add_argument("--generator", choices=GENERATORS, default="auto",
                   help="auto = replay for --gpu replay:*, else mutation; llm: the model of "
                   "--llm-base-url writes each child; llm-guided: the model chooses which mutation "
                   "edits to apply (one call per parent; works with small models). With --gpu "
                   "replay:* the llm generators seed from the recording, and their children, never "
                   "measured, are recorded as not in the replay cache")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--k", type=int, default=4, help="children measured per parent")
    p.add_argument("--m", type=int, default=4, help="screening factor: m*k children generated per parent")
    p.add_argument("--selector", choices=("puct", "islands"), default="puct")
    p.add_argument("--in-flight", type=_in_flight, default=1, metavar="P|auto",
                   help="P: parents expanded per step, the next parent's children generated and "
                   "forecast while the previous ones are measured (1: one parent at a time); auto: "
                   "pipelined, no steps: the executor is kept holding as many candidates as it has "
                   "workers (auto:N: N candidates) and a parent is expanded whenever one comes back. "
                   "--resume needs the same P, or auto for a pipelined search")
    p.add_argument("--max-seeds", type=int, default=4, help="seed kernels measured at the start")
    p.add_argument("--no-adapt", action="store_true",
                   help="forecast with the fitted forecaster only; by default a learned forecaster's "
                   "forecasts are corrected by the kernels this search has measured (--resume keeps "
                   "the setting the search was started with)")
    p.add_argument("--resume", metavar="SEARCH_ID", help="continue a stopped or crashed search")
    p.add_argument("--list", action="store_true", help="list the searches in the database")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_executor_options(p)
    add_llm_options(p)
    p.set_defaults(handler=_handle)


def _handle(args) -> int:
    from workbench.store import Store

    with Store(db_path(args)) as store:
        if args.list:
            rows = [{"id": s["id"], "state": s["state"], "problem": s.get("problem_id", ""),
                     "method": (s.get("method") or {}).get("name", ""), "budget": s.get("budget", ""),
                     "best": _fmt((s.get("summary") or {}).get("best_speedup")),
                     "created": s["created_at"]} for s in store.searches()]
            print(table(rows, ["id", "state", "problem", "method", "budget", "best", "created"]))
            return 0
        if not args.problem and not getattr(args, "problem_file", None):
            raise ConfigError("--problem ID or --problem-file PATH is required (or --list); "
                              "`workbench problems list` shows the ids")
        run = build_run(store, args, progress=_stderr)
        if args.resume:
            run.resume(args.resume)
        else:
            run.start()
        print(f"search {run.search_id}: {run.problem.id} on {run.hardware.key} "
              f"({'replay' if args.gpu.startswith('replay:') else 'live'}), method {args.method}, "
              f"budget {args.budget}", file=sys.stderr)
        try:
            summary = run.run(progress=not args.no_progress)
        except KeyboardInterrupt:
            run.stop()
            print(f"\ninterrupted; resume with --resume {run.search_id}", file=sys.stderr)
            return 130
        finally:
            run.executor.close()
    _print_summary(summary)
    return 0


def _in_flight(value: str):
    from argparse import ArgumentTypeError

    from workbench.search.pipeline import parse_in_flight

    try:
        return parse_in_flight(value)
    except ConfigError as e:
        raise ArgumentTypeError(str(e)) from e


def _fmt(x: Any) -> str:
    return f"{x:.3f}" if isinstance(x, float) else ("-" if x is None else str(x))


def _print_summary(s: dict[str, Any]) -> None:
    acc = s["forecast_bin_accuracy"]
    print(f"best speedup:            {_fmt(s['best_speedup'])}x ({s['best_candidate_id'] or 'none correct'})")
    print(f"GPU measurements used:   {s['gpu_measurements']} / {s['budget']}")
    print(f"candidates considered:   {s['candidates_considered']} (trusted forecasts: {s['trusted']}, "
          f"failed generations: {s['failed_generations']}, failed measurements: {s['failed_measurements']})")
    if acc is None:
        print("forecast accuracy:       - (no forecast of a correctly measured candidate)")
    else:
        print(f"forecast accuracy:       {acc:.1%} exact bin, {s['forecast_within_one_bin']:.1%} within one "
              f"bin, on {s['forecast_pairs']} measured candidates")
    print(f"finished:                {s['finish_reason'] or 'no (stopped)'}")


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def build_run(store, args, progress=None):
    """A SearchRun from parsed CLI arguments (problem, executor, generator, forecaster, method).

    `progress(message)` receives stage messages while the forecaster is fitted or loaded
    (the CLI prints them to stderr, the app shows them as the runner's status)."""
    from workbench.problems.registry import resolve
    from workbench.search import MutationGenerator, ReplayGenerator, SearchRun, ZooGenerator, make_method
    from workbench.search.pipeline import in_flight_setting
    from workbench.search.selection import make_selector

    problem = resolve(getattr(args, "problem", None), problem_file=getattr(args, "problem_file", None),
                      store=store)
    if problem.origin != "builtin" and store.get_problem(problem.id) != problem:
        store.put_problem(problem)  # a --problem-file problem is kept like an imported one
    executor = _executor(store, args.gpu, getattr(args, "executor", "local"), getattr(args, "ray_address", None))
    kind = args.generator
    if kind == "auto":
        kind = "replay" if args.gpu.startswith("replay:") else "mutation"
    replay = args.gpu.startswith("replay:")
    seeds = (ReplayGenerator(store.candidates(problem_id=problem.id), executor.candidate_ids)
             if replay else ZooGenerator())
    if kind == "replay":
        generator = seeds
    elif kind == "mutation":
        generator = MutationGenerator(ZooGenerator())
    elif kind == "llm-guided":
        from workbench.search.generators import LLMGuidedGenerator

        generator = LLMGuidedGenerator(llm_client(args), seed_from=seeds)
    else:
        from workbench.search.generators import LLMGenerator

        generator = LLMGenerator(llm_client(args), seed_from=seeds)
    forecaster = _forecaster(store, args, problem, executor.hardware.key, progress)
    method = make_method(args.method, k=args.k, m=args.m)
    adapt = not getattr(args, "no_adapt", False)
    stored = store.get_search(args.resume) if getattr(args, "resume", None) else None
    if stored is not None and not getattr(args, "no_adapt", False):
        adapt = bool(stored.get("adapt_forecasts", False))  # searches from before the option: off
    return SearchRun(store, problem, executor, generator, forecaster, method, budget=args.budget, seed=args.seed,
                     selector=make_selector(args.selector), max_seeds=args.max_seeds, adapt_forecasts=adapt,
                     **in_flight_setting(getattr(args, "in_flight", 1), executor))


def _executor(store, gpu: str, kind: str = "local", ray_address: str | None = None):
    if kind == "ray":
        return ray_executor(gpu, ray_address)
    if gpu.startswith("replay:"):
        from workbench.execution.executors import CacheExecutor

        return CacheExecutor.from_store(store, gpu.split(":", 1)[1])
    if gpu == "cpu":
        from workbench.execution.executors import CPUExecutor

        return CPUExecutor()
    if gpu.startswith("cuda"):
        from workbench.execution.executors import LocalGPUExecutor

        index = int(gpu.split(":", 1)[1]) if ":" in gpu else 0
        return LocalGPUExecutor(gpus=[index])
    raise ConfigError(f"--gpu {gpu!r} is not understood; use cuda:0, cpu or replay:h100")


def _forecaster(store, args, problem, hardware_key: str, progress=None):
    if args.forecaster == "none":
        return None
    if args.forecaster == "roofline":
        from workbench.forecast.roofline import RooflineForecaster

        return RooflineForecaster()  # analytic: nothing to fit
    if args.forecaster == "llm":
        from workbench.forecast.llm import LLMForecaster

        return LLMForecaster(llm_client(args))
    from workbench.forecast.learned import LearnedForecaster

    if args.forecaster_path:
        return LearnedForecaster.load(args.forecaster_path)
    from workbench.forecast.fitted import fit_or_load

    # Fit on other problems only: the searched problem's own measurements would leak the answer.
    ms = [m for m in store.measurements(hardware_key=hardware_key) if m.problem_id != problem.id]
    # Callers that build args themselves (the app's runner) may leave reference_time out.
    reference_time = getattr(args, "reference_time", "measured")
    # Loaded from the on-disk cache when these rows were fitted before with these settings.
    return fit_or_load(store.problems(), store.candidates(), ms, hardware_key=hardware_key,
                       settings={"reference_time": reference_time}, progress=progress,
                       cache_dir=getattr(args, "cache_dir", None))
