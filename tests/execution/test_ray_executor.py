"""The Ray executor on a local 2-CPU Ray cluster in CPU mode (Triton interpreter).

One cluster for the module (starting one costs seconds); each executor joins it. The killed
worker tests kill the Ray worker process itself: the candidate's module sends SIGKILL to its
parent, which is the Ray worker that started the sandboxed subprocess.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from exec_fixtures import CPU_OPTIONS, load_fixtures
from workbench.errors import ConfigError
from workbench.problems import get_problem
from workbench.records import Candidate, Status
from workbench.zoo import zoo_candidates

ray = pytest.importorskip("ray")

from workbench.execution.ray_executor import RayActorExecutor, RayExecutor  # noqa: E402

SOFTMAX = {f.name: f for f in load_fixtures("honest")}["softmax_manual_torch"]
FAULTS = {f.name: f for f in load_fixtures("faults")}
QUICK = ("L1/02_relu", "L1/28_clamp")  # quick under the interpreter (a few seconds each)


@pytest.fixture(scope="module")
def cluster():
    ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level="WARNING",
             runtime_env={"env_vars": {"PYTHONPATH": str(Path(__file__).resolve().parents[2])}})
    yield
    ray.shutdown()


def _executor(**kw) -> RayExecutor:
    return RayExecutor(device="cpu", options=CPU_OPTIONS, timeout_s=120, **kw)


def _killer(ex: RayExecutor, marker: Path | None) -> Candidate:
    """An honest softmax variant whose Ray worker dies when it gets it (only the first time
    when `marker` is given: a retry then succeeds), through the task's fault-injection key."""
    c = Candidate.from_source(SOFTMAX.problem.id, SOFTMAX.candidate.source + "\n_KILLS = 1\n",
                              origin="test:kills-ray-worker")
    ex._config["test_kill_worker"] = {"candidate_id": c.id, "once_marker": str(marker) if marker else None}
    return c


def test_a_candidate_cannot_kill_the_ray_worker(cluster):
    src = "import os\nos.kill(os.getppid(), 9)\n" + SOFTMAX.candidate.source.split('"""', 2)[2]
    killer = Candidate.from_source(SOFTMAX.problem.id, src, origin="test:tries-to-kill")
    with _executor(max_retries=0) as ex:
        m, after = ex.measure(SOFTMAX.problem, [killer, SOFTMAX.candidate])
    assert m.status is not Status.OK and "Ray task failed" not in m.reason, m.reason
    assert after.status is Status.OK, after.reason


def test_a_batch_of_zoo_candidates_comes_back_with_honest_statuses(cluster):
    zoo = {pid: [c for c in zoo_candidates(pid) if c.backend == "triton"][:2] for pid in QUICK}
    cuda = Candidate.from_source(QUICK[0], "from torch.utils.cpp_extension import load_inline\nclass ModelNew: pass\n")
    with _executor(chunk_size=2, workers_per_task=2) as ex:  # two sandboxed processes per task
        assert ex.hardware.key == "cpu"
        futures = {c.id: f for pid, cs in zoo.items() for c, f in zip(cs, ex.submit(get_problem(pid), cs))}
        bad = FAULTS["syntax_error"]
        futures[bad.candidate.id] = ex.submit(bad.problem, [bad.candidate])[0]
        futures[cuda.id] = ex.submit(get_problem(QUICK[0]), [cuda])[0]
        got = {cid: f.result(timeout=240) for cid, f in futures.items()}
        placements = dict(ex.placements)
    for cs in zoo.values():
        for c in cs:
            assert got[c.id].status is Status.OK, got[c.id].reason
            assert got[c.id].candidate_ms > 0 and got[c.id].speedup is not None and got[c.id].hardware_key == "cpu"
            assert placements[c.id]["pid"] > 0 and placements[c.id]["node_id"]
    assert got[bad.candidate.id].status is Status.COMPILE_ERROR
    assert got[cuda.id].status is Status.RUNTIME_ERROR and "need a GPU" in got[cuda.id].reason
    assert all(m.candidate_id == cid for cid, m in got.items())


def test_a_killed_worker_is_retried(cluster, tmp_path):
    marker = tmp_path / "killed-once"
    with _executor(max_retries=1) as ex:
        killer = _killer(ex, marker)
        m = ex.measure(SOFTMAX.problem, [killer])[0]
    assert marker.is_dir()  # the first attempt did kill its Ray worker
    assert m.status is Status.OK, m.reason


def test_a_worker_killed_on_every_try_is_recorded_and_its_chunk_mates_are_measured(cluster):
    honest = [SOFTMAX.candidate, Candidate.from_source(SOFTMAX.problem.id, SOFTMAX.candidate.source + "\n_V = 1\n")]
    with _executor(chunk_size=3, max_retries=0) as ex:
        killer = _killer(ex, None)
        batch = [honest[0], killer, honest[1]]
        ms = ex.measure(SOFTMAX.problem, batch)
    assert [m.candidate_id for m in ms] == [c.id for c in batch]  # one record each, in order
    assert ms[1].status is Status.CRASHED
    assert "Ray task failed" in ms[1].reason and "WorkerCrashedError" in ms[1].reason, ms[1].reason
    assert ms[0].status is Status.OK and ms[2].status is Status.OK, (ms[0].reason, ms[2].reason)


def test_misuse_raises_config_errors(cluster, monkeypatch):
    with pytest.raises(ConfigError, match="no GPUs"):
        RayExecutor(device="cuda")
    with pytest.raises(ConfigError, match="cuda"):
        RayExecutor(device="tpu")
    ex = _executor()
    ex.close()
    with pytest.raises(ConfigError, match="closed"):
        ex.submit(SOFTMAX.problem, [SOFTMAX.candidate])
    assert ray.is_initialized()  # an executor that joined a running Ray leaves it running
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ConfigError, match=r"pip install .*\[ray\]"):
        RayExecutor(device="cpu")


# --------------------------------------------------------------------------- actor mode
def _actors(**kw) -> RayActorExecutor:
    return RayActorExecutor(device="cpu", actors=2, options=CPU_OPTIONS, timeout_s=120, **kw)


def test_actors_measure_candidates_one_call_each_spread_over_the_actors(cluster):
    cands = [c for c in zoo_candidates(QUICK[0]) if c.backend == "triton"][:2]
    cands += [Candidate.from_source(QUICK[0], c.source + "\n_V = 1\n") for c in cands]
    bad = FAULTS["syntax_error"]
    with _actors(linger_s=5) as ex:
        assert ex.actors == 2 and ex.capacity == 2 and ex.hardware.key == "cpu"
        futures = ex.submit(get_problem(QUICK[0]), cands) + ex.submit(bad.problem, [bad.candidate])
        got = [f.result(timeout=300) for f in futures]
        placements = dict(ex.placements)
    assert [m.candidate_id for m in got] == [c.id for c in cands] + [bad.candidate.id]
    assert all(m.status is Status.OK and m.speedup is not None for m in got[:4]), [m.reason for m in got]
    assert got[4].status is Status.COMPILE_ERROR
    assert len({placements[c.id]["pid"] for c in cands}) == 2  # both actors measured


def test_an_actor_killed_once_is_restarted_and_its_candidate_measured_again(cluster, tmp_path):
    marker = tmp_path / "killed-once"
    with _actors() as ex:
        killer = _killer(ex, marker)
        ms = ex.measure(SOFTMAX.problem, [SOFTMAX.candidate, killer])
    assert marker.is_dir()  # the first attempt did kill its actor
    assert ms[1].status is Status.OK, ms[1].reason
    assert ms[0].status is not Status.CRASHED, ms[0].reason  # its actor-mate (timing on 2 busy cores may be noisy)


def test_an_actor_killed_on_every_try_records_its_candidate_crashed(cluster):
    with _actors(max_restarts=3) as ex:
        killer = _killer(ex, None)
        ms = ex.measure(SOFTMAX.problem, [killer, SOFTMAX.candidate])
    assert ms[0].status is Status.CRASHED and "Ray task failed" in ms[0].reason, ms[0].reason
    assert ms[1].status is not Status.CRASHED, ms[1].reason


def test_misuse_of_actor_mode_raises_config_errors(cluster):
    with pytest.raises(ConfigError, match="at least 1"):
        _actors(workers_per_gpu=0)
    with pytest.raises(ConfigError, match="linger_s"):
        _actors(linger_s=-1)
    with pytest.raises(ConfigError, match="CPU mode only"):
        RayActorExecutor(device="cuda", actors=2)
    from workbench.compose import make_executor
    from workbench.spec import Target

    with pytest.raises(ConfigError, match="actors, tasks"):
        make_executor(Target.parse("cpu").with_executor("ray"), ray_mode="threads")


# --------------------------------------------------------------------------- the flag, CLI and app
def test_measure_cli_runs_through_ray(cluster, capsys):
    from exec_fixtures import FIXTURES
    from workbench.cli import main

    rc = main(["measure", "softmax", str(FIXTURES / "honest" / "softmax_manual_torch.py"), "--gpu", "cpu",
               "--executor", "ray"])
    out = capsys.readouterr().out
    assert rc == 0 and "status:     ok" in out and "hardware:   cpu" in out, out
    assert ray.is_initialized()  # joined the running cluster, left it running


def test_search_and_app_choose_the_ray_executor(cluster, tmp_path, monkeypatch):
    import argparse

    from workbench.commands.search import build_run
    from workbench.compose import make_executor
    from workbench.spec import Target
    from workbench.store import Store
    from workbench.ui.runner import SearchRunner
    from workbench.ui.search_view import gpu_options

    with Store(tmp_path / "wb.sqlite") as store:
        args = argparse.Namespace(problem="L1/02_relu", gpu="cpu", method="measure_all", forecaster="none",
                                  forecaster_path=None, generator="auto", budget=2, seed=0, k=1, m=1,
                                  selector="puct", max_seeds=1, executor="ray", ray_address=None)
        run = build_run(store, args)
        assert isinstance(run.executor, RayActorExecutor) and run.executor.device == "cpu"  # the default mode
        run.executor.close()
        with pytest.raises(ConfigError, match="measures live"):
            Target.parse("replay:h100").with_executor("ray")
        # The app: $WORKBENCH_EXECUTOR picks Ray for live searches, never for replays.
        monkeypatch.setenv("WORKBENCH_EXECUTOR", "ray")
        monkeypatch.setenv("WORKBENCH_RAY_ADDRESS", "auto")
        assert gpu_options(store)["GPUs of the Ray cluster (live, $WORKBENCH_RAY_ADDRESS)"] == "cuda"
        from workbench.app import banner_text

        assert banner_text(store) == ""  # not REPLAY: live searches measure on the cluster
        seen = []
        runner = SearchRunner(store, build=lambda st, a: seen.append(a))
        store.put_problem(get_problem("L1/02_relu"))
        runner.start("L1/02_relu", "cpu", "measure_all", "none", budget=2)
        runner.join(timeout=30)
        assert seen[-1].target == Target("ray", device="cpu", address="auto")
        ex = make_executor(seen[-1].target, store)
        assert isinstance(ex, RayExecutor)
        ex.close()
        runner.start("L1/02_relu", "replay:h100", "measure_all", "none", budget=2)
        runner.join(timeout=30)
        assert seen[-1].target == Target("replay", key="h100")
        monkeypatch.setenv("WORKBENCH_EXECUTOR", "dask")
        with pytest.raises(ConfigError, match="WORKBENCH_EXECUTOR"):
            runner.start("L1/02_relu", "cpu", "measure_all", "none", budget=2)


def test_gpu_hardware_is_probed_once_per_node_and_gpu(cluster, monkeypatch):
    from workbench.execution import ray_executor
    from workbench.records import Hardware

    calls = []

    def fake_probe(index):
        calls.append(index)
        return Hardware(key="h200", name=f"fake GPU {index}", kind="cuda", sm_count=132)

    monkeypatch.setattr(ray_executor, "probe_gpu", fake_probe)
    monkeypatch.setattr(ray_executor, "_GPU_HARDWARE", {})
    gpu = f"9{len(ray.nodes())}7"  # an id no real GPU has
    first = ray_executor._gpu_hardware(gpu)
    monkeypatch.setattr(ray_executor, "_GPU_HARDWARE", {})  # a new Ray worker process on the same node
    again = ray_executor._gpu_hardware(gpu)
    assert calls == [int(gpu)] and first == again and again.name == f"fake GPU {gpu}"
