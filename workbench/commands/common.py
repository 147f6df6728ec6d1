"""Helpers shared by the command modules."""
from __future__ import annotations

import os
from pathlib import Path

from workbench.compose import executor_from_env, ray_executor  # noqa: F401 - the commands use them from here
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
    environment; the key from the variable named by `args.llm_api_key_env` (default
    WORKBENCH_LLM_API_KEY). Errors name the flag and the variable to set (`compose.LLMEndpoint`)."""
    return llm_endpoint(args).client()


def llm_endpoint(args):
    """The `compose.LLMEndpoint` of parsed `--llm-*` arguments."""
    from workbench.compose import LLMEndpoint

    return LLMEndpoint(getattr(args, "llm_base_url", None), getattr(args, "llm_model", None),
                       getattr(args, "llm_api_key_env", None), getattr(args, "llm_concurrency", None))
