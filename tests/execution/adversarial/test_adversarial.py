"""Adversarial candidates (fixtures/): each one is caught (its status names it) or contained
(what it tried did not happen), through the real CPU executor: supervisor, contained worker,
clean reference process and the executor's own verdict.

The fixtures hide from the static reader on purpose (names built from pieces, modules taken
from sys.modules), so what is tested here is the executor's structure, not the AST checks.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from probes import FIXTURES, SECRET, Probes, expect  # noqa: E402

from workbench.execution import contain  # noqa: E402
from workbench.execution.executors import CPUExecutor  # noqa: E402
from workbench.records import Candidate, Status  # noqa: E402

HERE = Path(__file__).parent
OPTIONS = {"seeds": [0, 1], "cpu_timing": {"max_total_ms": 100, "max_runs": 5}}
LANDLOCK = contain.landlock_abi()


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("adversarial")
    probes = Probes(tmp)
    problem = probes.problem
    honest = Candidate.from_source(problem.id, (HERE.parent / "fixtures/honest/softmax_manual_torch.py").read_text())
    os.environ["WB_ADVERSARIAL_SECRET"] = SECRET
    try:
        with CPUExecutor(workers=2, timeout_s=25, run_timeout_s=30, options=OPTIONS,
                         cache_root=tmp / "cache") as ex:
            futures = {name: ex.submit(problem, [c])[0] for name, c in probes.candidates.items()}
            results = {name: f.result(timeout=900) for name, f in futures.items()}
            after = ex.measure(problem, [honest])[0]
    finally:
        os.environ.pop("WB_ADVERSARIAL_SECRET", None)
        time.sleep(0.5)
    side = probes.side_effects()
    return {"results": results, "after": after, "side": side}


def test_there_are_at_least_twenty_attacks():
    assert len(FIXTURES) >= 20


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_attack_is_caught_or_contained(path, run):
    m = run["results"][path.stem]
    assert m.status is not Status.OK, f"{path.stem} passed as ok: {m.reason}"
    assert m.status.value in expect(path.stem), (m.status.value, m.reason)
    assert m.reason
    assert m.speedup is None


def test_forged_results_count_as_crashes(run):
    res = run["results"]
    for name in ("a02_forge_channel_then_exit", "a03_forge_channel_and_continue", "a22_channel_garbage"):
        assert res[name].status is Status.CRASHED, (name, res[name].reason)
    assert "not trusted" in res["a03_forge_channel_and_continue"].reason
    assert "malformed" in res["a22_channel_garbage"].reason


def test_the_reference_cannot_be_slowed(run):
    res = run["results"]
    for name in ("a04_slow_reference_module_call", "a05_slow_reference_torch_fn_transient",
                 "a06_slow_reference_torch_fn_via_sys_modules", "a24_timer_patch_via_sys_modules"):
        assert res[name].status is Status.CHEAT_SUSPECTED, (name, res[name].reason)
    assert "nn.Module.__call__ was replaced" in res["a04_slow_reference_module_call"].reason


def test_timed_runs_are_checked(run):
    res = run["results"]
    for name in ("a07_garbage_after_call_count", "a08_garbage_on_reused_inputs"):
        assert "timed run" in res[name].reason, (name, res[name].reason)


def test_a_patched_checker_does_not_decide(run):
    res = run["results"]
    for name in ("a10_patch_checker_via_sys_modules", "a11_patch_guards_class_method"):
        assert res[name].status in (Status.INCORRECT, Status.CHEAT_SUSPECTED), res[name].reason


def test_no_process_outlives_its_worker(run):
    assert not run["side"]["processes_left"], run["side"]
    res = run["results"]
    for name in ("a12_hidden_subprocess_setsid", "a13_double_fork_setsid"):
        assert "process(es) running" in res[name].reason, (name, res[name].reason)


def test_the_environment_holds_no_secret(run):
    m = run["results"]["a19_env_secret"]
    assert SECRET not in m.reason + m.log
    assert "key=None" in m.reason


def test_the_executor_survives_and_measures_after_the_attacks(run):
    assert run["after"].status is Status.OK, run["after"].reason


def test_oversized_source_is_refused_with_a_reason(run):
    m = run["results"]["oversized_source"]
    assert m.status is Status.COMPILE_ERROR and "byte limit" in m.reason


@pytest.mark.skipif(LANDLOCK < 1, reason="no Landlock on this kernel: writes are not contained here")
def test_writes_outside_the_work_dir_are_refused(run):
    assert not run["side"]["file_written"]
    assert run["side"]["db_rows"] == 5
    assert "Permission" in run["results"]["a16_write_outside_pathlib"].reason


@pytest.mark.skipif(LANDLOCK < 4 and not (sys.platform.startswith("linux") and os.geteuid() == 0),
                    reason="neither Landlock TCP rules nor a network namespace on this machine")
def test_no_connection_leaves_the_worker(run):
    assert run["side"]["connections"] == []


@pytest.mark.skipif(LANDLOCK < 6, reason="Landlock ABI < 6: signals to the parent are not scoped here")
def test_signals_to_the_parent_are_refused(run):
    for name in ("a14_kill_parent", "a23_ctypes_hidden_kill"):
        m = run["results"][name]
        assert m.status is Status.RUNTIME_ERROR, (name, m.reason)
