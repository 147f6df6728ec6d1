"""Composition: a `SearchSpec` becomes the executor, forecaster, generator and `SearchRun` that
carry it out. The CLI, the app, notebooks and benchmarks all build searches here:

    from workbench import compose
    from workbench.spec import SearchSpec

    spec = SearchSpec("L1/01_softmax", target="replay:h100", forecaster="roofline", budget=8)
    run = compose.build(spec, store)        # or compose.resume(spec, store, search_id)
    run.run()

The run stores `spec.to_dict()` with the search (`SearchRun.config()["spec"]`); `resume`
refuses a spec that differs from the stored one, naming the fields.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable

from workbench.errors import ConfigError
from workbench.spec import SearchSpec, Target
from workbench.spec.registry import EXECUTORS

#: Spec fields a resumed search may change: which GPU of the type, or which cluster, measures.
#: The GPU type itself is checked by `SearchRun.resume` (its hardware key).
#: The local forecaster's device is where its model runs, like the GPU index.
RESUMABLE_CHANGES = frozenset({"target.index", "target.address", "forecaster.device"})

#: The local forecaster's prompt set and answer cap (tokens): the compact prompts the RL
#: adapters are trained on (docs/rl.md), answers of about 115 tokens.
LOCAL_PROMPT = "compact"
LOCAL_MAX_NEW_TOKENS = 160


# ---------------------------------------------------------------------- executors
def executor_from_env() -> tuple[str, str | None]:
    """The app's executor choice: $WORKBENCH_EXECUTOR (local | ray) and $WORKBENCH_RAY_ADDRESS."""
    kind = (os.environ.get("WORKBENCH_EXECUTOR") or "local").strip().lower()
    if kind not in EXECUTORS:
        raise ConfigError(f"WORKBENCH_EXECUTOR={kind!r}: use one of {', '.join(EXECUTORS)}")
    return kind, os.environ.get("WORKBENCH_RAY_ADDRESS") or None


def make_executor(target: Target | str, store: Any = None, contract: Any = None, **options: Any):
    """The executor of `target`: CacheExecutor over `store`'s recorded measurements (replay),
    LocalGPUExecutor (cuda:N), CPUExecutor (cpu) or, for a Ray target, RayExecutor or
    RayActorExecutor (option `ray_mode`, else $WORKBENCH_RAY_MODE: actors | tasks). `options` go to the live
    executors' constructors (workers, timeouts, ...); a replay takes none. A cuda target may be
    given `gpus=[0, 1, ...]`: several local GPUs of one type instead of GPU N alone.
    `contract` (a `workbench.problems.contract.Contract`; None: the default) is the precision,
    tolerance and trials every measurement is judged by: live executors get it in their job
    options, a replay answers only from measurements recorded under it."""
    target = Target.parse(target) if isinstance(target, str) else target
    if target.kind == "replay":
        from workbench.execution.executors import CacheExecutor

        if store is None:
            raise ConfigError(f"{target} answers from a database's recorded measurements; pass the store")
        if options:
            raise ConfigError(f"{target} replays recorded measurements; executor options "
                              f"({', '.join(options)}) apply to live targets only")
        return CacheExecutor.from_store(store, target.key, contract=contract)
    if contract is not None:
        options["options"] = {**dict(options.get("options") or {}), **contract.options()}
    if target.kind == "cpu":
        from workbench.execution.executors import CPUExecutor

        return CPUExecutor(**options)
    if target.kind == "cuda":
        from workbench.execution.executors import LocalGPUExecutor

        gpus = list(options.pop("gpus", None) or [target.index])
        return LocalGPUExecutor(gpus=gpus, **options)
    from workbench.execution.ray_executor import RayActorExecutor, RayExecutor

    mode = (options.pop("ray_mode", None) or os.environ.get("WORKBENCH_RAY_MODE") or "actors").strip().lower()
    if mode not in RAY_MODES:
        raise ConfigError(f"Ray mode {mode!r} (WORKBENCH_RAY_MODE): use one of {', '.join(RAY_MODES)}")
    cls = RayActorExecutor if mode == "actors" else RayExecutor
    return cls(address=target.address, device=target.device, **options)


#: How the Ray executor measures: "actors" (the default: one long-lived actor per GPU running the
#: local chunk executor, so a search's candidates reuse warm workers) or "tasks" (one Ray task
#: per candidate or chunk, a fresh sandboxed worker each; what batch tools such as
#: benchmarks/landscape_bench.py use with large chunks).
RAY_MODES = ("actors", "tasks")


def ray_executor(gpu: str, address: str | None, **kwargs: Any):
    """A RayExecutor for a --gpu value: "cpu" measures on the cluster's CPUs (Triton interpreter),
    "cuda" / "cuda:N" on its GPUs (Ray places each task on a free GPU; N does not pick one)."""
    return make_executor(Target.parse(gpu).with_executor("ray", address), **kwargs)


# ---------------------------------------------------------------------- language models
@dataclass(frozen=True)
class LLMEndpoint:
    """How to reach an OpenAI-compatible server; unset fields fall back to the environment
    ($WORKBENCH_LLM_BASE_URL, _MODEL). The key is read from the variable `api_key_env`
    (default $WORKBENCH_LLM_API_KEY), never stored."""

    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    concurrency: int | None = None

    @classmethod
    def of(cls, obj: Any) -> "LLMEndpoint":
        """From any object with these attributes (the app's LLMSettings), or None: the environment."""
        if obj is None or isinstance(obj, cls):
            return obj or cls()
        return cls(getattr(obj, "base_url", None), getattr(obj, "model", None),
                   getattr(obj, "api_key_env", None), getattr(obj, "concurrency", None))

    def client(self):
        """A ChatClient; errors name the flag and the variable to set, not Python arguments."""
        from workbench.llm.client import ENV_API_KEY, ENV_BASE_URL, ENV_MODEL, ChatClient
        from workbench.llm.errors import LLMConfigError

        url = (self.base_url or os.environ.get(ENV_BASE_URL) or "").strip()
        model = (self.model or os.environ.get(ENV_MODEL) or "").strip()
        if not url:
            raise LLMConfigError(f"no LLM server configured: pass --llm-base-url URL or set {ENV_BASE_URL}, "
                                 "e.g. http://127.0.0.1:8080/v1 for a local llama.cpp or vLLM server")
        if not url.startswith(("http://", "https://")):
            raise LLMConfigError(f"--llm-base-url / {ENV_BASE_URL} {url!r} must start with http:// or "
                                 "https://, e.g. http://127.0.0.1:8080/v1")
        if not model:
            raise LLMConfigError(f"no model name: pass --llm-model NAME or set {ENV_MODEL}; the server "
                                 f"lists the names it serves at {url.rstrip('/')}/models")
        key_env = (self.api_key_env or ENV_API_KEY).strip()
        if self.concurrency is not None and int(self.concurrency) < 1:
            raise LLMConfigError(f"--llm-concurrency {self.concurrency}: at least 1 request in flight")
        return ChatClient(base_url=url, model=model, api_key=os.environ.get(key_env) or None,
                          max_concurrency=int(self.concurrency) if self.concurrency else 4)


# ---------------------------------------------------------------------- parts
def make_generator(spec: SearchSpec, store: Any, problem, executor, llm: Any = None):
    """The generator of `spec` for `problem`. Replay targets seed from the recording."""
    from workbench.search import MutationGenerator, ReplayGenerator, ZooGenerator

    kind = spec.generator.resolved(spec.target)
    # On a local GPU a problem without zoo kernels also gets Inductor's seed, made on that GPU.
    inductor_gpu = spec.target.index if spec.target.kind == "cuda" else None
    seeds = (ReplayGenerator(store.candidates(problem_id=problem.id), executor.candidate_ids)
             if spec.target.replay else ZooGenerator(inductor_gpu=inductor_gpu))
    if kind == "replay":
        return seeds
    if kind == "mutation":
        return MutationGenerator(ZooGenerator(inductor_gpu=inductor_gpu))
    if kind == "llm-guided":
        from workbench.search.generators import LLMGuidedGenerator

        return LLMGuidedGenerator(LLMEndpoint.of(llm).client(), seed_from=seeds)
    from workbench.search.generators import LLMGenerator

    return LLMGenerator(LLMEndpoint.of(llm).client(), seed_from=seeds)


def make_local_forecaster(model: str, gguf_file: str | None = None, adapter: str | None = None,
                          device: str = "cpu"):
    """The transformers forecaster on `model` (a directory or hub id; `gguf_file` inside it) with
    the optional LoRA `adapter` directory, on `device`, answering the `LOCAL_PROMPT` prompts in at
    most `LOCAL_MAX_NEW_TOKENS` tokens. Loading errors are ConfigErrors that name the fix."""
    from workbench.forecast.local import LocalTransformersForecaster

    target = Target.local(device, what="the local model's device")
    if target.kind == "cuda":
        import torch

        n = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if target.index >= n:
            raise ConfigError(f"device {device}: this machine has {n} CUDA device(s); run the local model "
                              "on cpu" + (f" or cuda:0..cuda:{n - 1}" if n else ""))
    return LocalTransformersForecaster(model, gguf_file=gguf_file, adapter_path=adapter, device=device,
                                       prompt=LOCAL_PROMPT, max_new_tokens=LOCAL_MAX_NEW_TOKENS)


def make_forecaster(spec: SearchSpec, store: Any, problem, hardware_key: str, llm: Any = None,
                    progress: Callable[[str], None] | None = None, cache_dir: str | None = None):
    """The forecaster of `spec` (None for "none"). A learned one is loaded from `spec.forecaster.path`,
    else fitted on the database's measurements of other problems on `hardware_key` (or loaded
    from the cache of such fits in `cache_dir`). A local one is loaded from its model (and
    adapter) files, checked first (`ForecasterChoice.check_files`). `progress(message)` hears
    the stages."""
    choice = spec.forecaster
    if choice.name == "none":
        return None
    if choice.name == "roofline":
        from workbench.forecast.roofline import RooflineForecaster

        return RooflineForecaster()  # analytic: nothing to fit
    if choice.name == "llm":
        from workbench.forecast.llm import LLMForecaster

        return LLMForecaster(LLMEndpoint.of(llm).client())
    if choice.name == "local":
        choice.check_files()
        if progress is not None:
            progress(f"loading the local model {choice.model}"
                     + (f" with the adapter {choice.adapter}" if choice.adapter else "") + "...")
        return make_local_forecaster(str(choice.model), choice.gguf_file, choice.adapter, choice.device)
    from workbench.forecast.learned import LearnedForecaster

    if choice.path:
        return LearnedForecaster.load(choice.path)
    from workbench.forecast.fitted import fit_or_load

    # Fit on other problems only: the searched problem's own measurements would leak the answer.
    problems, candidates = store.problems(), store.candidates()
    ms = [m for m in store.measurements(hardware_key=hardware_key) if m.problem_id != problem.id]
    if not ms and hardware_key == "cpu":
        problems, candidates, ms, hardware_key = _gpu_rows_for_cpu(store, problem, progress)
    return fit_or_load(problems, candidates, ms, hardware_key=hardware_key,
                       settings={"reference_time": choice.reference_time}, progress=progress,
                       cache_dir=cache_dir)


#: The GPU type whose measurements a learned forecaster is fitted on for a CPU search.
CPU_STAND_IN_GPU = "h100"


def _gpu_rows_for_cpu(store: Any, problem: Any, progress: Callable[[str], None] | None):
    """(problems, candidates, measurements, hardware key) to fit a learned forecaster on for a
    search on the CPU, where no measurement is GPU data: the database's `CPU_STAND_IN_GPU`
    measurements, else the shipped ones (`kernels_cache/shipped`), the searched problem left out.
    The forecasts then rank candidates as that GPU would."""
    ms = [m for m in store.measurements(hardware_key=CPU_STAND_IN_GPU) if m.problem_id != problem.id]
    problems, candidates = store.problems(), store.candidates()
    where = "the database"
    if not ms:
        from pathlib import Path

        from workbench.dataset import DEFAULT_SHIPPED_DIR, load_shipped

        if not Path(DEFAULT_SHIPPED_DIR).joinpath("kernels.parquet").exists():
            raise ConfigError("a learned forecaster for a CPU search is fitted on GPU measurements, and there "
                              f"are none: load some (`workbench dataset load-shipped`) or use --forecaster roofline")
        problems, candidates, shipped = load_shipped(DEFAULT_SHIPPED_DIR)
        ms = [m for m in shipped if m.hardware_key == CPU_STAND_IN_GPU and m.problem_id != problem.id]
        where = f"the shipped data ({DEFAULT_SHIPPED_DIR})"
    if progress is not None:
        progress(f"CPU times are not GPU data: the learned forecaster is fitted on the {CPU_STAND_IN_GPU} "
                 f"measurements of {where} and ranks candidates as that GPU would")
    return problems, candidates, ms, CPU_STAND_IN_GPU


# ---------------------------------------------------------------------- runs
#: `build`'s default for `forecaster`: make the spec's forecaster.
FROM_SPEC: Any = object()


def build(spec: SearchSpec, store: Any, *, llm: Any = None, progress: Callable[[str], None] | None = None,
          cache_dir: str | None = None, executor: Any = None, problem: Any = None, generator: Any = None,
          forecaster: Any = FROM_SPEC, method_options: dict[str, Any] | None = None, **executor_options: Any):
    """A SearchRun of `spec` over `store` (not started: call `start()` or `resume(id)`).

    llm: the endpoint for llm forecasters / generators (`LLMEndpoint` or an object with its
    attributes; None: the environment). executor: an executor to use instead of the target's
    (a benchmark's shared one); it must measure on the target's GPU type. executor_options:
    see `make_executor`.

    Parts a caller already holds (a benchmark replaying recorded measurements that are not in
    `store`) replace what the spec would make: `problem` (its id must be `spec.problem`),
    `generator`, `forecaster` (an object, or None for no forecaster; the stored spec still names
    the spec's forecaster) and `method_options` (method arguments besides k and m, e.g. a
    selective method's policy).
    """
    from workbench.problems.registry import resolve
    from workbench.search import SearchRun, make_method
    from workbench.search.pipeline import in_flight_setting
    from workbench.search.selection import make_selector

    if problem is None:
        problem = resolve(spec.problem, store=store)
    elif problem.id != spec.problem:
        raise ConfigError(f"the problem given ({problem.id}) is not the spec's ({spec.problem})")
    if executor is None:
        executor = make_executor(spec.target, store, contract=spec.contract, **executor_options)
    if generator is None:
        generator = make_generator(spec, store, problem, executor, llm)
    if forecaster is FROM_SPEC:
        forecaster = make_forecaster(spec, store, problem, executor.hardware.key, llm, progress, cache_dir)
    method = make_method(spec.method.name, k=spec.method.k, m=spec.method.m, **(method_options or {}))
    run = SearchRun(store, problem, executor, generator, forecaster, method, budget=spec.budget,
                    seed=spec.seed, selector=make_selector(spec.selector), max_seeds=spec.max_seeds,
                    adapt_forecasts=spec.forecaster.adapt,
                    **in_flight_setting(spec.in_flight, executor), spec=spec.to_dict())
    return run


def stored_spec(store: Any, search_id: str) -> SearchSpec | None:
    """The spec a search was started with; None for a search stored before specs were."""
    info = store.get_search(search_id)
    if info is None:
        raise ConfigError(f"no search {search_id!r} in this database; `workbench search --list` shows them")
    return SearchSpec.from_dict(info["spec"]) if info.get("spec") else None


def check_resume(store: Any, search_id: str, spec: SearchSpec) -> None:
    """Raise ConfigError naming every field where `spec` differs from the stored search's spec
    (other than `RESUMABLE_CHANGES`). Searches stored without a spec are checked by
    `SearchRun.resume` against their stored settings instead."""
    before = stored_spec(store, search_id)
    if before is None:
        return
    diff = {k: v for k, v in before.diff(spec).items() if k not in RESUMABLE_CHANGES}
    if diff:
        fields = "; ".join(f"{k}: stored {a!r}, given {b!r}" for k, (a, b) in diff.items())
        raise ConfigError(f"search {search_id} was started with a different spec ({fields}); resume it "
                          "with the same settings, or start a new search")


def resume(spec: SearchSpec, store: Any, search_id: str, **build_options: Any):
    """`build(spec)` attached to the stored search `search_id`, after `check_resume`."""
    check_resume(store, search_id, spec)
    return build(spec, store, **build_options).resume(search_id)


__all__ = ["FROM_SPEC", "LLMEndpoint", "LOCAL_MAX_NEW_TOKENS", "LOCAL_PROMPT", "RESUMABLE_CHANGES", "build",
           "check_resume", "executor_from_env", "make_executor", "make_forecaster", "make_generator",
           "make_local_forecaster", "ray_executor", "resume", "stored_spec"]
