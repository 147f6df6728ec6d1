"""`workbench search`: run, resume or list kernel searches.

    workbench search --problem L1/01_softmax --gpu replay:h100 --method screen_topk \
        --budget 40 --forecaster learned --seed 0
    workbench search --problem L1/01_softmax --forecaster local --adapter ADAPTER_DIR
    workbench search --resume SEARCH_ID ...same options...
    workbench search --list
"""
from __future__ import annotations

import sys
from typing import Any

from workbench.commands.common import (add_contract_options, add_executor_options, add_llm_options,
                                      add_local_model_options, contract_from_args, db_path, llm_endpoint,
                                      local_forecaster_choice, table)
from workbench.errors import ConfigError
from workbench.spec import registry as reg
from workbench.spec.target import FORMS_HELP

D = reg.DEFAULTS


def register(sub) -> None:
    p = sub.add_parser("search", help="run an evolutionary kernel search with a forecaster as surrogate",
                       description="Search for faster kernels of one problem. The budget counts GPU "
                       "measurements; every event is stored, so a run can be watched, stopped (Ctrl-C) "
                       "and resumed with --resume.")
    p.add_argument("--problem", help="problem id (L1/01_softmax, an imported L1/19_ReLU) or unique name")
    from workbench.problems.registry import add_problem_file_option

    add_problem_file_option(p)
    p.add_argument("--gpu", default=D["target"], help=f"where to measure: {FORMS_HELP}")
    p.add_argument("--method", choices=reg.METHODS, default=D["method"])
    p.add_argument("--budget", type=int, default=D["budget"], help="GPU measurements allowed, seeds included")
    p.add_argument("--forecaster", choices=reg.forecaster_names("search"), default=None,
                   help=f"default {D['forecaster']}, {reg.CPU_FORECASTER} with --gpu cpu. "
                   "learned: fit on the database's measurements of other problems (a CPU search: on "
                   "the GPU measurements, the shipped ones if the database has none); roofline; "
                   "llm: the server of --llm-base-url / --llm-model; local: a chat model run here "
                   "(--local-model, --gguf-file, --adapter, --local-device); none: only with measure_all")
    p.add_argument("--forecaster-path", help="a saved LearnedForecaster to load instead of fitting one")
    p.add_argument("--cache-dir", help="where fitted learned forecasters are cached and reused (default "
                   "$WORKBENCH_CACHE_DIR, else ~/.cache/gpu-forecasters-workbench); the folder must be "
                   "your own: entries are pickles")
    p.add_argument("--reference-time", choices=reg.REFERENCE_TIMES, default=D["reference_time"],
                   help="the fitted learned forecaster's reference time: measured on the GPU "
                   "(default: the database's earlier measurements of the problem there when the run "
                   "starts, the run's own once a kernel is measured, the estimate before either) or "
                   "only the analytic estimate")
    p.add_argument("--generator", choices=reg.generator_names("cli"), default=D["generator"],
                   help="auto = replay for --gpu replay:*, else mutation; llm: the model of "
                   "--llm-base-url writes each child; llm-guided: the model chooses which mutation "
                   "edits to apply (one call per parent; works with small models). With --gpu "
                   "replay:* the llm generators seed from the recording; their children have no "
                   "recording, so they are not measured (no budget used, nothing stored)")
    p.add_argument("--seed", type=int, default=D["seed"])
    p.add_argument("--k", type=int, default=D["k"], help="children measured per parent")
    p.add_argument("--m", type=int, default=D["m"], help="screening factor: m*k children generated per parent")
    p.add_argument("--selector", choices=reg.SELECTORS, default=D["selector"])
    p.add_argument("--in-flight", type=_in_flight, default=D["in_flight"], metavar="P|auto",
                   help="P: parents expanded per step, the next parent's children generated and "
                   "forecast while the previous ones are measured (1: one parent at a time); auto: "
                   "pipelined, no steps: the executor is kept holding as many candidates as it has "
                   "workers (auto:N: N candidates) and a parent is expanded whenever one comes back. "
                   "--resume needs the same P, or auto for a pipelined search")
    p.add_argument("--max-seeds", type=int, default=D["max_seeds"], help="seed kernels measured at the start")
    p.add_argument("--no-adapt", action="store_true",
                   help="forecast with the fitted forecaster only; by default a learned forecaster's "
                   "forecasts are corrected by the kernels this search has measured (--resume keeps "
                   "the setting the search was started with)")
    p.add_argument("--resume", metavar="SEARCH_ID", help="continue a stopped or crashed search")
    p.add_argument("--list", action="store_true", help="list the searches in the database")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_contract_options(p)
    add_local_model_options(p)
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
        from workbench import compose

        spec = spec_from_args(store, args)
        options = dict(llm=llm_endpoint(args), progress=_stderr, cache_dir=getattr(args, "cache_dir", None))
        if args.resume:
            run = compose.resume(spec, store, args.resume, **options)
        else:
            run = compose.build(spec, store, **options)
            run.start()
        print(f"search {run.search_id}: {run.problem.id} on {run.hardware.key} "
              f"({'replay' if spec.target.replay else 'live'}), method {spec.method.name}, "
              f"forecaster {spec.forecaster.name}, budget {spec.budget}; judged at "
              f"{spec.contract.describe()}", file=sys.stderr)
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


def spec_from_args(store, args):
    """The SearchSpec of parsed `workbench search` arguments.

    The problem is resolved to its id (a --problem-file problem is stored like an imported one);
    --gpu with --executor ray becomes a Ray target. Resuming without --no-adapt keeps the stored
    search's adapt setting (searches from before the option: off)."""
    from workbench.problems.registry import resolve
    from workbench.spec import MethodChoice, SearchSpec, Target

    problem = resolve(getattr(args, "problem", None), problem_file=getattr(args, "problem_file", None),
                      store=store)
    if problem.origin != "builtin" and store.get_problem(problem.id) != problem:
        store.put_problem(problem)
    target = Target.parse(args.gpu).with_executor(getattr(args, "executor", "local") or "local",
                                                  getattr(args, "ray_address", None))
    adapt = not getattr(args, "no_adapt", False)
    stored = store.get_search(args.resume) if getattr(args, "resume", None) else None
    if stored is not None and adapt:
        adapt = bool(stored.get("adapt_forecasts", False))
    if getattr(args, "forecaster", None) is None:
        args.forecaster = reg.default_forecaster(target.kind, target.device)
    forecaster = local_forecaster_choice(args, path=getattr(args, "forecaster_path", None),
                                         reference_time=getattr(args, "reference_time", D["reference_time"]),
                                         adapt=adapt)
    return SearchSpec(problem.id, target=target, forecaster=forecaster, generator=args.generator,
                      method=MethodChoice(args.method, k=args.k, m=args.m), budget=args.budget, seed=args.seed,
                      max_seeds=args.max_seeds, selector=getattr(args, "selector", D["selector"]),
                      in_flight=getattr(args, "in_flight", 1) or 1, contract=contract_from_args(args))


def build_run(store, args, progress=None):
    """A SearchRun (not started) from parsed CLI arguments: `compose.build(spec_from_args(...))`."""
    from workbench import compose

    return compose.build(spec_from_args(store, args), store, llm=llm_endpoint(args), progress=progress,
                         cache_dir=getattr(args, "cache_dir", None))
