"""Measure candidates on a Ray cluster: many GPUs, many machines, the same Executor interface.

`RayExecutor(address)` connects to a running cluster (`"auto"` for the one this machine has
joined, `"ray://head:10001"` through Ray Client) or, with no address, starts a local one sized
by `num_gpus` / `num_cpus`. Each Ray task measures one candidate (or a chunk of candidates of
one problem) through the existing sandbox: `run_in_sandbox` for one, the chunk worker
(`run_chunk`) for several. So everything the local executor guarantees per candidate (process
isolation, budgets, correctness, guards, timing) holds on every node.

Scheduling and faults:
- GPU mode: every task asks Ray for `num_gpus=1`, so one task measures on a GPU at a time and
  Ray spreads the tasks over every GPU of the cluster. The task's subprocess inherits the
  `CUDA_VISIBLE_DEVICES` Ray set for it; its Hardware record is probed on that GPU (once per
  Ray worker process and GPU). Compilation runs inside the task (Triton compiles on first
  launch, for the device it targets); with `workers_per_task` > 1 a task's worker processes
  compile and check side by side while a timed region holds the GPU's lock alone.
- CPU mode (`device="cpu"`): the CPU executor's path (Triton interpreter, CPU_SIZES), one CPU
  per task; for CI and for checking candidates on CPU-only clusters.
- A task whose Ray worker dies (killed, out of memory, node lost) is retried by Ray up to
  `max_retries` times. A chunk that still fails is re-run one candidate per task, so only the
  candidate that kills its worker ends `crashed`, with Ray's reason; every submitted candidate
  gets exactly one Measurement.
- Futures resolve as each task ends (a chunk's futures together); `placements` records where
  each candidate was measured (node, GPU ids, worker pid).
- The store and the measurement cache stay with the caller on the driver: this class only
  returns Measurements. Build caches (Triton, CUDA extensions) live on each node.

Every node needs the workbench importable (an install, or the repository at the driver's path:
the tasks' PYTHONPATH starts with the driver's repository root). Ray is imported only here and
only when an executor is created; `pip install "gpu-forecasters-workbench[ray]"` provides it.
"""
from __future__ import annotations

import json
import os
import socket
import tempfile
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from workbench.errors import ConfigError
from workbench.execution.base import Executor
from workbench.execution.chunked import run_chunk
from workbench.execution.executors import probe_gpu
from workbench.execution.hardware import cpu_hardware, roofline_floor_ms
from workbench.execution.job import MeasureJob, MeasureOptions
from workbench.execution.sandbox import run_in_sandbox
from workbench.records import Candidate, Hardware, Measurement, Problem, Status

ROOT = str(Path(__file__).resolve().parents[2])
INSTALL_HINT = ('Ray is not installed: `pip install "gpu-forecasters-workbench[ray]"` (or `pip install '
                '"ray>=2.40"`) on the driver and on every node of the cluster, or use --executor local')
_CUDA_REFUSAL = "CUDA C++ candidates need a GPU; the CPU executor runs Triton and torch only"


def import_ray():
    """The `ray` module, or a ConfigError that says what to install."""
    try:
        import ray
    except ImportError as e:
        raise ConfigError(f"{INSTALL_HINT} ({e})") from e
    return ray


# --------------------------------------------------------------------------- task side
_GPU_HARDWARE: dict[str, Hardware] = {}  # per Ray worker process: CUDA_VISIBLE_DEVICES -> probe


def _visible_gpu() -> str:
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").strip()
    if not visible or "," in visible:
        raise RuntimeError(f"a GPU task must see exactly one GPU; CUDA_VISIBLE_DEVICES={visible!r}")
    return visible


def _gpu_hardware(visible: str) -> Hardware:
    """The Hardware record of GPU `visible` of this node, probed once per node, GPU and cluster
    session (Ray starts worker processes freely; a probe costs a CUDA start-up)."""
    if visible not in _GPU_HARDWARE:
        import ray

        node = ray.get_runtime_context().get_node_id()
        cached = Path(tempfile.gettempdir()) / "wb_ray_hardware" / f"{node}-{visible}.json"
        try:
            _GPU_HARDWARE[visible] = Hardware.from_dict(json.loads(cached.read_text()))
        except (OSError, ValueError, TypeError):
            # probe_gpu puts the value back into CUDA_VISIBLE_DEVICES; Ray's GPU ids are such values.
            hw = probe_gpu(int(visible) if visible.isdigit() else visible)  # type: ignore[arg-type]
            cached.parent.mkdir(exist_ok=True)
            tmp = cached.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(hw.to_dict()))
            tmp.replace(cached)
            _GPU_HARDWARE[visible] = hw
    return _GPU_HARDWARE[visible]


def _placement(gpu: str | None) -> dict[str, Any]:
    import ray

    ctx = ray.get_runtime_context()
    return {"node_id": ctx.get_node_id(), "host": socket.gethostname(), "pid": os.getpid(), "gpu": gpu}


def _probe_task() -> dict[str, Any]:
    """Runs on a GPU worker: the Hardware record of the GPU Ray gave it."""
    return _gpu_hardware(_visible_gpu()).to_dict()


def _measure_task(problem_d: dict, candidate_ds: list[dict], config: dict) -> dict[str, Any]:
    """Runs on a Ray worker: measure the candidates (one problem) in sandboxed subprocesses.

    Returns {"measurements": [Measurement dicts, input order], "where": placement}. Never raises
    for a bad candidate; an exception here is a bug or a broken node and is recorded by the driver.
    """
    problem = Problem.from_dict(problem_d)
    cands = [Candidate.from_dict(c) for c in candidate_ds]
    opts, cache_root = config["options"], config["cache_root"]
    # Fault injection for the tests of the driver's retries: this Ray worker dies when it gets
    # the named candidate (once, when a marker path is given). A candidate itself can no longer
    # kill it (see contain.py), so the tests name one here; the executor never sets this key.
    die = config.get("test_kill_worker")
    if die and any(c.id == die["candidate_id"] for c in cands):
        marker = die.get("once_marker")
        if marker is None or not os.path.exists(marker):
            if marker:
                os.mkdir(marker)
            os.kill(os.getpid(), 9)
    out: dict[str, Measurement] = {}
    if config["device"] == "cpu":
        hw, gpu, lock_path, floor = cpu_hardware(), None, None, None
        for c in cands:
            if c.backend == "cuda":
                out[c.id] = Measurement(candidate_id=c.id, problem_id=problem.id, hardware_key=hw.key,
                                        status=Status.RUNTIME_ERROR, hardware_fingerprint=hw.fingerprint,
                                        reason=_CUDA_REFUSAL)
    else:
        gpu = _visible_gpu()  # gpu_index stays None below: the subprocess inherits Ray's CUDA_VISIBLE_DEVICES
        hw = _gpu_hardware(gpu)
        # The GPU's lock (gpu_lock.py) for every worker process on this node's GPU: checks share
        # it, a timed region holds it alone.
        lock_dir = Path(tempfile.gettempdir()) / "wb_ray_gpu_locks"
        lock_dir.mkdir(exist_ok=True)
        lock_path = str(lock_dir / f"gpu{gpu}.lock")
        floor = roofline_floor_ms(hw.key, problem.flops, problem.bytes_moved)
    job = MeasureJob(problem, hw, device=config["device"], timeout_s=config["timeout_s"],
                     run_timeout_s=config["run_timeout_s"], lock_path=lock_path, roofline_floor_ms=floor,
                     cache_root=cache_root, options=MeasureOptions.from_dict(opts))

    def one_process(part: list[Candidate]) -> list[Measurement]:
        if len(part) == 1:
            c = part[0]
            return [run_in_sandbox(job.replace(
                timeout_s=config["timeout_s"] * (2 if c.backend == "cuda" else 1),
                cpu_mem_bytes=config["cpu_mem_bytes"] if config["device"] == "cpu" else None), c)]
        return run_chunk(job, part)

    todo = [c for c in cands if c.id not in out]
    parts = [p for p in (todo[i::config["workers"]] for i in range(config["workers"])) if p]
    with ThreadPoolExecutor(max(1, len(parts)), thread_name_prefix="wb-ray-task") as pool:
        for ms in pool.map(one_process, parts):
            out.update((m.candidate_id, m) for m in ms)
    return {"measurements": [out[c.id].to_dict() for c in cands], "where": _placement(gpu)}


# --------------------------------------------------------------------------- driver side
@dataclass
class _Task:
    problem: Problem
    candidates: list[Candidate]
    futures: list[Future]
    single: bool = False  # a candidate re-run alone after its chunk's task failed


class RayExecutor(Executor):
    """Measures on the GPUs (or CPUs) of a Ray cluster; see the module docstring.

    `address`: None starts a local cluster (`num_gpus`, `num_cpus`: its size; None = detect),
    "auto" joins the cluster this machine is part of, "ray://host:10001" connects a Ray Client.
    If Ray is already initialised in this process, that connection is used and left open.
    `chunk_size`: candidates per task (1 = one sandboxed worker per candidate; more = chunk
    workers, fewer process starts). `workers_per_task`: worker processes a task runs side by
    side over its chunk (compilation and correctness overlap; a timed region holds the GPU's
    lock alone). `max_retries`: Ray re-runs of a task whose worker
    died. `timeout_s` / `run_timeout_s`: the sandbox budgets in seconds (compile+correctness,
    timing); `cpu_mem_bytes`: RLIMIT_AS of CPU-mode workers. `options`: extra job options for
    the worker (timing settings, seeds, ...). `cache_root`: build cache root on the nodes.
    """

    def __init__(self, address: str | None = None, *, device: str = "cuda", num_gpus: int | None = None,
                 num_cpus: int | None = None, chunk_size: int = 1, workers_per_task: int = 1, max_retries: int = 2,
                 timeout_s: float = 300.0, run_timeout_s: float = 120.0, cpu_mem_bytes: int = 6 * 2**30,
                 options: dict | None = None, cache_root: str | Path | None = None,
                 probe_timeout_s: float = 600.0):
        if device not in ("cuda", "cpu"):
            raise ConfigError(f"device {device!r}: the Ray executor measures on 'cuda' (cluster GPUs) or 'cpu'")
        if chunk_size < 1 or workers_per_task < 1 or max_retries < 0:
            raise ConfigError("chunk_size and workers_per_task must be >= 1, max_retries >= 0")
        if address and (num_gpus is not None or num_cpus is not None):
            raise ConfigError("num_gpus / num_cpus size a local cluster; a running cluster at "
                              f"{address!r} has its own size (leave them unset)")
        self._ray = ray = import_ray()
        self._owns_ray = False
        if not ray.is_initialized():
            env = {"env_vars": {"PYTHONPATH": ROOT + os.pathsep + "${PYTHONPATH}"}}
            try:
                if address:
                    ray.init(address=address, runtime_env=env, logging_level="WARNING")
                else:
                    # "local": always a new cluster, never one found through /tmp/ray or RAY_ADDRESS.
                    ray.init(address="local", num_gpus=num_gpus, num_cpus=num_cpus, runtime_env=env,
                             include_dashboard=False, logging_level="WARNING")
            except (ConnectionError, RuntimeError, ValueError) as e:
                raise ConfigError(f"cannot start or reach a Ray cluster at {address or 'a new local cluster'}: "
                                  f"{e}; start one with `ray start --head` or pass --ray-address") from e
            self._owns_ray = True
        self.device = device
        self.chunk_size = chunk_size
        self.max_retries = max_retries
        base = {"seeds": [0, 1]} if device == "cpu" else {"gpu_memory_fraction": min(0.9, 1.8 / workers_per_task)}
        self._config = {"device": device, "workers": workers_per_task,
                        "timeout_s": float(timeout_s), "run_timeout_s": float(run_timeout_s),
                        "cpu_mem_bytes": int(cpu_mem_bytes), "options": {**base, **(options or {})},
                        "cache_root": str(cache_root) if cache_root else None}
        MeasureOptions.from_dict(self._config["options"])  # an unknown option is refused here, not on a node
        self._task_options = {"num_cpus": 1, "num_gpus": 1 if device == "cuda" else 0,
                              "max_retries": max_retries, "retry_exceptions": False}
        self._remote = ray.remote(_measure_task)
        self._pending: dict[Any, _Task] = {}
        self._cv = threading.Condition()
        self._closed = False
        #: candidate id -> where it was measured (node_id, host, pid, gpu); filled as tasks end.
        self.placements: dict[str, dict[str, Any]] = {}
        try:
            self.hardware = cpu_hardware() if device == "cpu" else self._probe(probe_timeout_s)
        except BaseException:
            self._shutdown()
            raise
        self._thread = threading.Thread(target=self._collect, name="wb-ray-collect", daemon=True)
        self._thread.start()

    def _probe(self, timeout_s: float) -> Hardware:
        ray = self._ray
        gpus = ray.cluster_resources().get("GPU", 0)
        if gpus < 1:
            raise ConfigError("the Ray cluster has no GPUs: add GPU nodes (`ray start --num-gpus N`), "
                              "or measure on its CPUs with --gpu cpu")
        ref = ray.remote(_probe_task).options(num_gpus=1, num_cpus=1, max_retries=self.max_retries).remote()
        try:
            return Hardware.from_dict(ray.get(ref, timeout=timeout_s))
        except ray.exceptions.GetTimeoutError as e:
            ray.cancel(ref)
            raise ConfigError(f"no GPU of the Ray cluster became free within {timeout_s:.0f} s") from e
        except ray.exceptions.RayError as e:
            raise ConfigError(f"probing a GPU of the Ray cluster failed: {str(e)[-800:]}") from e

    @property
    def cluster_gpus(self) -> int:
        """GPUs in the cluster now (what Ray can spread GPU tasks over)."""
        return int(self._ray.cluster_resources().get("GPU", 0))

    @property
    def capacity(self) -> int:
        """Candidates the cluster measures at once: one task per GPU (CPU mode: per CPU), each of
        `chunk_size` candidates."""
        res = self._ray.cluster_resources()
        return max(1, int(res.get("GPU" if self.device == "cuda" else "CPU", 1))) * self.chunk_size

    def submit(self, problem: Problem, candidates: Sequence[Candidate]) -> list[Future[Measurement]]:
        if self._closed:
            raise ConfigError("this executor is closed; create a new one")
        cands = list(candidates)
        futures: list[Future[Measurement]] = [Future() for _ in cands]
        for i in range(0, len(cands), self.chunk_size):
            self._launch(_Task(problem, cands[i:i + self.chunk_size], futures[i:i + self.chunk_size]))
        return futures

    def _launch(self, task: _Task) -> None:
        ref = self._remote.options(**self._task_options).remote(
            task.problem.to_dict(), [c.to_dict() for c in task.candidates], self._config)
        with self._cv:
            self._pending[ref] = task
            self._cv.notify_all()

    def _collect(self) -> None:
        """Background thread: resolve futures as tasks end (the store stays with the caller)."""
        ray = self._ray
        while True:
            with self._cv:
                self._cv.wait_for(lambda: self._pending or self._closed)
                if self._closed:
                    return
                refs = list(self._pending)
            ready, _ = ray.wait(refs, num_returns=1, timeout=0.5)
            if ready:
                ready, _ = ray.wait(refs, num_returns=len(refs), timeout=0)
            for ref in ready:
                with self._cv:
                    task = self._pending.pop(ref, None)
                if task is not None:
                    self._finish(ref, task)

    def _finish(self, ref, task: _Task) -> None:
        try:
            out = self._ray.get(ref)
        except Exception as e:  # noqa: BLE001 - worker crash, node loss, cancel, or a broken node
            if len(task.candidates) > 1 and not self._closed:
                for c, f in zip(task.candidates, task.futures):  # only the culprit should end crashed
                    self._launch(_Task(task.problem, [c], [f], single=True))
                return
            first = str(e).strip().splitlines()[0][:300] if str(e).strip() else ""
            why = (f"Ray task failed ({type(e).__name__}) after {self.max_retries} retries: {first}")
            for c, f in zip(task.candidates, task.futures):
                self._resolve(f, self._crashed(task.problem, c, why, str(e)[-4000:]))
            return
        by_id = {d["candidate_id"]: Measurement.from_dict(d) for d in out["measurements"]}
        for c, f in zip(task.candidates, task.futures):
            self.placements[c.id] = out["where"]
            m = by_id.get(c.id) or self._crashed(task.problem, c, "the Ray task returned no result for it")
            self._resolve(f, m)

    def _crashed(self, problem: Problem, c: Candidate, reason: str, log: str = "") -> Measurement:
        return Measurement(candidate_id=c.id, problem_id=problem.id, hardware_key=self.hardware.key,
                           hardware_fingerprint=self.hardware.fingerprint, status=Status.CRASHED,
                           reason=reason, log=log)

    @staticmethod
    def _resolve(f: Future, m: Measurement) -> None:
        if not f.done():  # a future cancelled by close() stays cancelled
            f.set_result(m)

    def close(self) -> None:
        """Cancel tasks still running (their futures are cancelled), stop the collector, and shut
        Ray down if this executor started it. Idempotent."""
        with self._cv:
            if self._closed:
                return
            self._closed = True
            pending, self._pending = self._pending, {}
            self._cv.notify_all()
        for ref, task in pending.items():
            try:
                self._ray.cancel(ref)
            except Exception:  # noqa: BLE001 - cancelling is best effort
                pass
            for f in task.futures:
                f.cancel()
        self._thread.join(timeout=10)
        self._shutdown()

    def _shutdown(self) -> None:
        if self._owns_ray:
            self._owns_ray = False
            self._ray.shutdown()
