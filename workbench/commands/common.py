"""Helpers shared by the command modules."""
from __future__ import annotations

import os
from pathlib import Path


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


EXECUTORS = ("local", "ray")


def add_executor_options(p) -> None:
    """`--executor local|ray` and `--ray-address` (measure and search share them)."""
    p.add_argument("--executor", choices=EXECUTORS, default="local",
                   help="local: measure on this machine (default); ray: run each measurement as a task "
                   "on a Ray cluster (--gpu cuda: its GPUs, one task per GPU at a time; --gpu cpu: its CPUs)")
    p.add_argument("--ray-address", default=None,
                   help="with --executor ray: auto (the cluster this machine joined with `ray start`), "
                   "ray://HOST:10001 (Ray Client), or unset to start a local cluster on this machine")


def executor_from_env() -> tuple[str, str | None]:
    """The app's executor choice: $WORKBENCH_EXECUTOR (local | ray) and $WORKBENCH_RAY_ADDRESS."""
    from workbench.errors import ConfigError

    kind = (os.environ.get("WORKBENCH_EXECUTOR") or "local").strip().lower()
    if kind not in EXECUTORS:
        raise ConfigError(f"WORKBENCH_EXECUTOR={kind!r}: use one of {', '.join(EXECUTORS)}")
    return kind, os.environ.get("WORKBENCH_RAY_ADDRESS") or None


def ray_executor(gpu: str, address: str | None, **kwargs):
    """A RayExecutor for a --gpu value: "cpu" measures on the cluster's CPUs (Triton interpreter),
    "cuda" / "cuda:N" on its GPUs (Ray places each task on a free GPU; N does not pick one)."""
    from workbench.errors import ConfigError
    from workbench.execution.ray_executor import RayExecutor

    g = gpu.strip().lower()
    if g.startswith("replay:"):
        raise ConfigError(f"--gpu {gpu} answers from recorded measurements; --executor ray measures live "
                          "(use --gpu cuda or --gpu cpu with it, or drop --executor ray)")
    if g != "cpu" and g != "cuda" and not g.startswith("cuda:"):
        raise ConfigError(f"--gpu {gpu!r} is not understood with --executor ray; use cuda or cpu")
    return RayExecutor(address=address, device="cpu" if g == "cpu" else "cuda", **kwargs)


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


def llm_client(args):
    """A ChatClient from `--llm-base-url` / `--llm-model` / `--llm-concurrency`, else the
    environment; the key from the variable named by `args.llm_api_key_env` (the app's settings
    panel; default WORKBENCH_LLM_API_KEY). Errors name the flag and the variable to set, not
    Python arguments."""
    from workbench.llm.client import ENV_API_KEY, ENV_BASE_URL, ENV_MODEL, ChatClient
    from workbench.llm.errors import LLMConfigError

    url = (getattr(args, "llm_base_url", None) or os.environ.get(ENV_BASE_URL) or "").strip()
    model = (getattr(args, "llm_model", None) or os.environ.get(ENV_MODEL) or "").strip()
    if not url:
        raise LLMConfigError(f"no LLM server configured: pass --llm-base-url URL or set {ENV_BASE_URL}, "
                             "e.g. http://127.0.0.1:8080/v1 for a local llama.cpp or vLLM server")
    if not url.startswith(("http://", "https://")):
        raise LLMConfigError(f"--llm-base-url / {ENV_BASE_URL} {url!r} must start with http:// or "
                             "https://, e.g. http://127.0.0.1:8080/v1")
    if not model:
        raise LLMConfigError(f"no model name: pass --llm-model NAME or set {ENV_MODEL}; the server "
                             f"lists the names it serves at {url.rstrip('/')}/models")
    key_env = (getattr(args, "llm_api_key_env", None) or ENV_API_KEY).strip()
    concurrency = getattr(args, "llm_concurrency", None)
    if concurrency is not None and int(concurrency) < 1:
        raise LLMConfigError(f"--llm-concurrency {concurrency}: at least 1 request in flight")
    return ChatClient(base_url=url, model=model, api_key=os.environ.get(key_env) or None,
                      max_concurrency=int(concurrency) if concurrency else 4)
