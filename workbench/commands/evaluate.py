"""`workbench evaluate`: cross-validated forecast metrics from the database or shipped data."""
from __future__ import annotations

from pathlib import Path

from workbench.commands.common import db_path
from workbench.errors import ConfigError

FORECASTERS = ("learned", "roofline")


def register(sub) -> None:
    p = sub.add_parser(
        "evaluate", help="score a forecaster with problem-level cross-validation",
        description="Forecast every ok measurement of a GPU and score the forecasts (bin "
        "accuracy, off-by-one, ECE, Brier, CRPS, NLL, AURC, Spearman, top-10%% recovery). With "
        "--split heldout-problems a learned forecaster is re-fit per fold on the other problems "
        "only. --train-gpu/--test-gpu evaluate transfer across GPUs. Writes reliability and "
        "risk-coverage PNGs and metrics.json under --out.")
    p.add_argument("--forecaster", choices=FORECASTERS, default="learned")
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
    p.add_argument("--source", help="read this shipped-layout directory instead of the database")
    p.add_argument("--out", default="eval", help="directory for PNGs and metrics.json (default ./eval)")
    p.set_defaults(handler=_evaluate)


def make_forecaster(name: str, seed: int = 0, reference_time: str = "measured"):
    """A fresh forecaster by CLI name (`reference_time`: the learned forecaster's, see
    `LearnedForecaster`)."""
    from workbench.forecast import LearnedForecaster, RooflineForecaster

    if name == "learned":
        return LearnedForecaster(seed=seed, reference_time=reference_time)
    if name == "roofline":
        return RooflineForecaster()
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


def _evaluate(args) -> int:
    from workbench.evaluate import evaluate, table
    from workbench.evaluate.report import offset_line

    if not (args.gpu or (args.train_gpu and args.test_gpu) or args.test_gpu):
        raise ConfigError("name the GPU: --gpu h100, or --train-gpu h100 --test-gpu h200")
    problems, candidates, measurements = _records(args)
    result = evaluate(lambda: make_forecaster(args.forecaster, args.seed, args.reference_time),
                      problems, candidates,
                      measurements, split=args.split, folds=args.folds, seed=args.seed,
                      gpu=args.gpu, train_gpu=args.train_gpu, test_gpu=args.test_gpu,
                      out=args.out)
    print(table([result]))
    line = offset_line(result)
    if line:
        print(line)
    for kind, path in result.plots.items():
        print(f"{kind}: {path}")
    return 0
