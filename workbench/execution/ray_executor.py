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
from workbench.execution.executors import GPU_LINGER_S, check_linger, probe_gpu
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


def _die_if_named(die: dict | None, cands: Sequence[Candidate]) -> None:
    """Fault injection for the tests of the driver's retries: this Ray worker process dies when
    it gets the candidate `die` names (only the first time when `die` gives a marker path)."""
    if die and any(c.id == die["candidate_id"] for c in cands):
        marker = die.get("once_marker")
        if marker is None or not os.path.exists(marker):
            if marker:
                os.mkdir(marker)
            os.kill(os.getpid(), 9)


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
    _die_if_named(config.get("test_kill_worker"), cands)
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
    actor: int = -1       # RayActorExecutor: the actor the call went to
    unavailable: int = 0  # RayActorExecutor: calls refused while that actor was restarting


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


# --------------------------------------------------------------------------- actor mode
class _MeasureActor:
    """Runs on a Ray worker that holds one GPU (or, in CPU mode, one CPU) for its lifetime: the
    local chunk executor over that GPU, so worker processes stay warm between candidates and
    compile side by side while a timed region holds the GPU alone (see ChunkedExecutor).

    On a GPU node the actor takes its share of the node's cores (GPU i of n: the i-th n-th), so
    two actors' timing processes never share a core."""

    def __init__(self, config: dict):
        from workbench.execution.executors import ChunkedExecutor, LocalGPUExecutor

        self.gpu: str | None = None
        common = {"timeout_s": config["timeout_s"], "run_timeout_s": config["run_timeout_s"],
                  "options": config["options"], "cache_root": config["cache_root"], "linger_s": config["linger_s"]}
        if config["device"] == "cpu":
            self.ex = ChunkedExecutor(cpu_hardware(), device="cpu", workers=config["workers"] or 1, **common)
            return
        import ray

        self.gpu = _visible_gpu()
        share = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
        node = ray.get_runtime_context().get_node_id()
        node_gpus = next((int(n["Resources"].get("GPU", 1)) for n in ray.nodes() if n["NodeID"] == node), 1)
        slot = int(self.gpu) % node_gpus if self.gpu.isdigit() else 0
        if len(share) >= 4 * node_gpus:
            share = share[slot * len(share) // node_gpus:(slot + 1) * len(share) // node_gpus]
            os.sched_setaffinity(0, share)
        workers = config["workers"] or max(2, min(12, len(share) - 2))
        gpu = int(self.gpu) if self.gpu.isdigit() else self.gpu  # the subprocesses get it as CUDA_VISIBLE_DEVICES
        self.ex = LocalGPUExecutor(gpus=(gpu,), workers=workers, **common)  # type: ignore[arg-type]

    def info(self) -> dict[str, Any]:
        return {"hardware": self.ex.hardware.to_dict(), "capacity": self.ex.capacity, "where": _placement(self.gpu)}

    def measure(self, problem_d: dict, candidate_d: dict, die: dict | None = None) -> dict[str, Any]:
        c = Candidate.from_dict(candidate_d)
        _die_if_named(die, [c])  # the tests' fault injection (see _measure_task)
        m = self.ex.submit(Problem.from_dict(problem_d), [c])[0].result()
        return {"measurements": [m.to_dict()], "where": _placement(self.gpu)}

    def close(self) -> None:
        self.ex.close()


class RayActorExecutor(RayExecutor):
    """Measures on a Ray cluster through one long-lived actor per GPU (CPU mode: `actors`
    actors of one CPU each), each running the local chunk executor over its GPU: worker
    processes stay warm and compile side by side, so candidates that arrive a few at a time,
    as a live search sends them, keep every GPU as busy as a batch does.

    Each candidate is one actor call, sent to the actor with the fewest candidates in hand,
    and its future resolves when that candidate is measured. A candidate can crash only its own
    sandboxed worker process; if an actor dies anyway (node lost, killed), Ray restarts it (up
    to `max_restarts` times) and each candidate it held is sent once more, alone; one that fails
    again is recorded `crashed` with Ray's reason. `workers_per_gpu`: worker processes per actor
    (default: the local executor's, from the actor's share of the node's cores); `linger_s`: see
    ChunkedExecutor. Other arguments as RayExecutor; `placements` records each candidate's actor.
    """

    def __init__(self, address: str | None = None, *, device: str = "cuda", num_gpus: int | None = None,
                 num_cpus: int | None = None, actors: int | None = None, workers_per_gpu: int | None = None,
                 linger_s: float = GPU_LINGER_S, max_restarts: int = 2, timeout_s: float = 300.0,
                 run_timeout_s: float = 120.0, options: dict | None = None, cache_root: str | Path | None = None,
                 probe_timeout_s: float = 600.0):
        if workers_per_gpu is not None and workers_per_gpu < 1 or actors is not None and actors < 1:
            raise ConfigError("workers_per_gpu and actors must be at least 1")
        linger_s = check_linger(linger_s)
        if device == "cuda" and actors is not None:
            raise ConfigError("on GPUs the actors are one per GPU of the cluster; `actors` sizes CPU mode only")
        self._actors: list[Any] = []
        self._load: list[int] = []
        self._capacity = 0
        self._n_actors, self._max_restarts = actors, max_restarts
        self._actor_config = {"workers": workers_per_gpu, "linger_s": linger_s}
        super().__init__(address, device=device, num_gpus=num_gpus, num_cpus=num_cpus, chunk_size=1,
                         workers_per_task=1, max_retries=1, timeout_s=timeout_s, run_timeout_s=run_timeout_s,
                         options=options, cache_root=cache_root, probe_timeout_s=probe_timeout_s)
        if device == "cpu":
            try:
                self._start_actors(probe_timeout_s)
            except BaseException:
                self._closed = True
                self._shutdown()
                raise

    def _start_actors(self, timeout_s: float) -> Hardware:
        ray = self._ray
        res = ray.cluster_resources()
        n = int(res.get("GPU", 0)) if self.device == "cuda" else (self._n_actors or max(1, int(res.get("CPU", 1))))
        opts = {k: v for k, v in self._config["options"].items() if k != "gpu_memory_fraction"}
        config = {**self._config, **self._actor_config, "options": opts}
        cls = ray.remote(_MeasureActor).options(num_gpus=1 if self.device == "cuda" else 0, num_cpus=1,
                                                max_concurrency=1024, max_restarts=self._max_restarts)
        self._actors = [cls.remote(config) for _ in range(n)]
        self._load = [0] * n
        try:
            infos = ray.get([a.info.remote() for a in self._actors], timeout=timeout_s)
        except ray.exceptions.GetTimeoutError as e:
            raise ConfigError(f"the Ray cluster did not start {n} measuring actors within {timeout_s:.0f} s "
                              "(one per GPU: is every GPU free?)") from e
        except ray.exceptions.RayError as e:
            raise ConfigError(f"starting the measuring actors failed: {str(e)[-800:]}") from e
        self._capacity = sum(i["capacity"] for i in infos)
        keys = {Hardware.from_dict(i["hardware"]).key for i in infos}
        if len(keys) > 1:
            raise ConfigError(f"GPUs of different types {sorted(keys)} in one cluster; measure each type "
                              "with its own cluster (a speedup is a property of one GPU type)")
        return Hardware.from_dict(infos[0]["hardware"])

    def _probe(self, timeout_s: float) -> Hardware:
        if self._ray.cluster_resources().get("GPU", 0) < 1:
            return super()._probe(timeout_s)  # says what is missing
        return self._start_actors(timeout_s)

    @property
    def actors(self) -> int:
        return len(self._actors)

    @property
    def capacity(self) -> int:
        """Candidates the actors measure at once: the sum of their executors' workers."""
        return max(1, self._capacity)

    def submit(self, problem: Problem, candidates: Sequence[Candidate]) -> list[Future[Measurement]]:
        if self._closed:
            raise ConfigError("this executor is closed; create a new one")
        futures: list[Future[Measurement]] = []
        for c in candidates:
            f: Future[Measurement] = Future()
            futures.append(f)
            self._launch(_Task(problem, [c], [f]))
        return futures

    def _launch(self, task: _Task) -> None:
        with self._cv:
            task.actor = min(range(len(self._actors)), key=lambda i: self._load[i])
            self._load[task.actor] += 1
            ref = self._actors[task.actor].measure.remote(task.problem.to_dict(), task.candidates[0].to_dict(),
                                                          self._config.get("test_kill_worker"))
            self._pending[ref] = task
            self._cv.notify_all()

    def _finish(self, ref, task: _Task) -> None:
        with self._cv:
            self._load[task.actor] -= 1
        try:
            self._ray.get(ref, timeout=0)
        except self._ray.exceptions.ActorUnavailableError:
            # The actor is restarting and never took the call: send it again shortly (not a retry).
            if task.unavailable < 600 and not self._closed:
                task.unavailable += 1
                threading.Timer(0.2, self._relaunch, (task,)).start()
                return
        except Exception:  # noqa: BLE001 - the actor died: once more, alone, on whichever actor is free
            if not task.single and not self._closed:
                self._launch(_Task(task.problem, task.candidates, task.futures, single=True))
                return
        super()._finish(ref, task)

    def _relaunch(self, task: _Task) -> None:
        if self._closed:
            for f in task.futures:
                f.cancel()
            return
        self._launch(task)

    def _shutdown(self) -> None:
        actors, self._actors = self._actors, []
        if actors:
            ray = self._ray
            try:
                ray.get([a.close.remote() for a in actors], timeout=30)
            except Exception:  # noqa: BLE001 - closing is best effort; the kill below ends them
                pass
            for a in actors:
                try:
                    ray.kill(a)
                except Exception:  # noqa: BLE001
                    pass
        super()._shutdown()

