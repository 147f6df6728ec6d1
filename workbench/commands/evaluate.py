"""`workbench evaluate`: cross-validated forecast metrics from the database or shipped data."""
from __future__ import annotations

from pathlib import Path

from workbench.commands.common import db_path
from workbench.errors import ConfigError
from workbench.spec.registry import DEFAULTS, forecaster_names

FORECASTERS = forecaster_names("evaluate")


def register(sub) -> None:
    p = sub.add_parser(
        "evaluate", help="score a forecaster with problem-level cross-validation",
        description="Forecast every ok measurement of a GPU and score the forecasts (bin "
        "accuracy, off-by-one, ECE, Brier, CRPS, NLL, AURC, Spearman, top-10%% recovery). With "
        "--split heldout-problems a learned forecaster is re-fit per fold on the other problems "
        "only. --train-gpu/--test-gpu evaluate transfer across GPUs. Writes reliability and "
        "risk-coverage PNGs and metrics.json under --out. The controls (random: seeded random "
        "order, uniform probabilities; climatology: training-fold bin frequencies) are always "
        "scored in the same run on the same folds, and the skill table gives every forecaster's "
        "discriminative metrics (same-problem pair order at 1.25x and 1.10x, screening hit rates, "
        "Brier/CRPS skill over climatology, sharpness, within-problem Spearman) with its "
        "difference to random and a bootstrap CI over problems. --out also gets "
        "forecasts.parquet, the out-of-fold forecasts of every forecaster scored.")
    p.add_argument("--forecaster", choices=FORECASTERS, default=DEFAULTS["forecaster"])
    p.add_argument("--gpu", help="GPU key for training and testing (h100, h200, ...)")
    p.add_argument("--train-gpu", help="GPU key of the training measurements (default: --gpu)")
    p.add_argument("--test-gpu", help="GPU key of the scored measurements (default: --gpu)")
    p.add_argument("--split", choices=("heldout-problems", "none"), default="heldout-problems")
    p.add_argument("--folds", type=int, default=5, help="cross-validation folds (default 5)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--reference-time", choices=("estimate", "measured"), default="measured",
                   help="learned forecaster: the reference's time in its features is its measured "
                   "time on the GPU (default: each scored problem's reference timed once, from its "
                   "measurements; never a candidate's time) or only the analytic estimate")
    p.add_argument("--bin-convention", choices=("prompt-table", "study-code"),
                   default="prompt-table",
                   help="how measured speedups become true bins: the study prompt's table "
                   "(default; workbench/bins.py) or its code's floor(2 log2 S) + 4")
    p.add_argument("--predicted-bin", choices=("argmax", "stated"), default="argmax",
                   help="the predicted bin of accuracy, ECE and AURC: the most probable bin "
                   "(default) or the bin the forecaster stated (an LLM's predicted_bin, as the "
                   "study scores it; the argmax where none was stated)")
    p.add_argument("--bootstrap", type=int, default=1000, metavar="B",
                   help="bootstrap resamples of the problems for the CIs (default 1000)")
    p.add_argument("--problem", help="score only this problem's measurements (id, KernelBench name "
                   "or unique name; built-in or imported), with the forecaster fitted on the others")
    from workbench.problems.registry import add_problem_file_option

    add_problem_file_option(p)
    p.add_argument("--source", help="read this shipped-layout directory instead of the database")
    p.add_argument("--out", default="eval", help="directory for PNGs, metrics.json and "
                   "forecasts.parquet (the out-of-fold forecasts; default ./eval)")
    p.set_defaults(handler=_evaluate)


def make_forecaster(name: str, seed: int = 0, reference_time: str = "measured"):
    """A fresh forecaster by CLI name (`reference_time`: the learned forecaster's, see
    `LearnedForecaster`)."""
    from workbench.forecast import LearnedForecaster, RooflineForecaster
    from workbench.forecast.controls import CONTROLS, make_control

    if name == "learned":
        return LearnedForecaster(seed=seed, reference_time=reference_time)
    if name == "roofline":
        return RooflineForecaster()
    if name in CONTROLS:
        return make_control(name, seed)
    raise ConfigError(f"unknown forecaster {name!r}; use one of {', '.join(FORECASTERS)}")


def _records(args):
    from workbench.dataset import collect

    if args.source:
        return collect(Path(args.source))
    path = db_path(args)
    if not path.exists():
        raise ConfigError(f"no database at {path}; load data with `workbench dataset load-shipped` "
                          "or pass --source DIR (a shipped-layout directory)")
    from workbench.store import Store

    with Store(path) as store:
        return collect(store)


def _held_out(args, problems, measurements):
    """(problems, [the one problem's id]) for --problem / --problem-file: the problem is resolved
    like every command's (built-in, imported, a file) and replaces the record of its id, so a
    file's counts are the ones used. ConfigError when nothing of it was measured."""
    from workbench.problems.registry import resolve

    records = {p.id: p for p in problems}
    # The records' own problems (a --source directory) count as imported ones.
    class _Records:
        def problems(self):
            return list(records.values())

    problem = resolve(args.problem, problem_file=args.problem_file, store=_Records())
    if not any(m.problem_id == problem.id for m in measurements):
        raise ConfigError(f"no measurements of {problem.id} to score; measure kernels of it with "
                          f"`workbench measure ... --save` (or a search) first")
    records[problem.id] = problem
    return list(records.values()), [problem.id]


def _evaluate(args) -> int:
    from workbench.evaluate import table
    from workbench.evaluate.controls import (discrimination_reports, evaluate_with_controls,
                                             skill_table, write_forecasts)
    from workbench.evaluate.report import offset_line

    if not (args.gpu or (args.train_gpu and args.test_gpu) or args.test_gpu):
        raise ConfigError("name the GPU: --gpu h100, or --train-gpu h100 --test-gpu h200")
    if args.bootstrap < 0:
        raise ConfigError(f"--bootstrap is a number of resamples >= 0, got {args.bootstrap}")
    problems, candidates, measurements = _records(args)
    held = None
    if args.problem or args.problem_file:
        problems, held = _held_out(args, problems, measurements)
    name = args.forecaster
    results = evaluate_with_controls(
        {name: lambda: make_forecaster(name, args.seed, args.reference_time)},
        problems, candidates, measurements, seed=args.seed, bin_convention=args.bin_convention,
        split=args.split, folds=args.folds, gpu=args.gpu, train_gpu=args.train_gpu,
        test_gpu=args.test_gpu, out=args.out, predicted_bin=args.predicted_bin, test_problems=held)
    print(f"true bins: {args.bin_convention} convention; predicted bin: {args.predicted_bin}")
    print(table(list(results.values())))
    line = offset_line(results[name])
    if line:
        print(line)
    print(skill_table(discrimination_reports(results, n_boot=args.bootstrap, seed=args.seed)))
    for kind, path in results[name].plots.items():
        print(f"{kind}: {path}")
    print(f"forecasts: {write_forecasts(results, Path(args.out) / 'forecasts.parquet')}")
    return 0
