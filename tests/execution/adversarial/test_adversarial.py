"""Adversarial candidates (fixtures/): each one is caught (its status names it) or contained
(what it tried did not happen, or changed nothing: its speedup is its honest twin's), through
the real CPU executor (supervisor, contained worker, the judge's timer and clean reference
worker), run by driver.py in a process whose own environment holds the secrets the probes
try to steal.

The fixtures hide from the static reader on purpose (names built from pieces, modules taken
from sys.modules, the in-process guard switched off), so what is tested here is the
executor's structure, not the AST checks.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from probes import FIXTURES, MARKER, SECRET, expect, leaked, outcome, twin_source, typical_speedup  # noqa: E402

from workbench.execution import contain  # noqa: E402

HERE = Path(__file__).parent
LANDLOCK = contain.landlock_abi()
#: On the CPU (interpreter, wall clock, shared cores) a contained probe's speedup may differ
#: from its twin's by noise alone (more than 10x on a loaded machine); the probes that forge
#: times do so by a factor of 10,000.
CPU_TOL = 25.0
#: Runs of each probe that may end contained, and of its twin: compared by their medians (one
#: run's speedup of an honest softmax here has been 25x off its twin's on a loaded machine).
REPEATS = 3
NEW = [p for p in FIXTURES if p.stem.startswith("b")]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("adversarial") / "probes.json"
    env = {k: v for k, v in os.environ.items() if k not in ("WB_PROBE_MARKER", "WB_ADVERSARIAL_SECRET")}
    root = str(HERE.parents[2])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    argv = [sys.executable, str(HERE / "driver.py"), "--cpu", "--repeats", str(REPEATS), "--out", str(out)]
    p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=1800)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(out.read_text())


def test_there_are_enough_attacks_each_new_one_with_a_twin():
    assert len(FIXTURES) >= 50
    assert len(NEW) >= 25
    for path in NEW:
        assert twin_source(path.read_text()) is not None, path.stem


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_attack_is_caught_or_contained(path, run):
    row = run["results"][path.stem]
    got = outcome(path.stem, row, run["twins"].get(path.stem), CPU_TOL)
    assert got in ("caught", "contained"), (path.stem, row["status"], row["reason"][:500], run["twins"].get(path.stem))
    if got == "caught":
        assert row["reason"] and row["speedup"] is None


def test_every_twin_is_measured_ok(run):
    bad = {n: (r["status"], r["reason"][:300]) for n, r in run["twins"].items() if r["status"] != "ok"}
    assert not bad, bad
    assert set(run["twins"]) == {p.stem for p in NEW}


def test_no_secret_reaches_a_reason_or_a_log(run):
    rows = {**run["results"], **run["twins"]}
    assert not {n: leaked(r) for n, r in rows.items() if leaked(r)}
    # The environment probes really did read something (their own process at least) and
    # were refused at the processes that hold the secrets.
    assert "refused" in run["results"]["b14_parent_environ"]["reason"]
    assert MARKER not in json.dumps(run) and SECRET not in json.dumps(run)


def test_forged_results_count_as_crashes(run):
    res = run["results"]
    for name in ("a02_forge_channel_then_exit", "a03_forge_channel_and_continue", "a22_channel_garbage",
                 "b03_forge_result_frames"):
        assert res[name]["status"] == "crashed", (name, res[name]["reason"])
    assert "malformed" in res["a22_channel_garbage"]["reason"]


def test_the_judges_clock_and_verdict_are_out_of_reach(run):
    # Rescaled samplers, timers and verdict functions in the worker change nothing.
    res, twins = run["results"], run["twins"]
    for name in ("b01_rescale_worker_timers", "b02_patch_sampler_and_verdict", "b25_patch_torch_softmax_unguarded"):
        assert res[name]["status"] == "ok" and twins[name]["status"] == "ok", (name, res[name]["reason"])
        assert len(res[name]["speedups"]) == len(twins[name]["speedups"]) == REPEATS
        assert typical_speedup(res[name]) <= CPU_TOL * typical_speedup(twins[name])
        # The rows keep the two medians the speedup is taken from (which side moved, when one does).
        assert res[name]["speedup"] == pytest.approx(res[name]["reference_ms"] / res[name]["candidate_ms"])


def test_outputs_of_timed_and_early_answered_calls_are_checked(run):
    res = run["results"]
    assert "timed run" in res["a07_garbage_after_call_count"]["reason"]
    assert "timed run" in res["b09_early_return_after_checks"]["reason"]
    for name in ("b26_answer_without_work", "b27_stale_output_handed_over"):
        assert res[name]["status"] in ("incorrect", "cheat_suspected"), (name, res[name]["reason"])
    # b04 answers first and does the work in a thread afterwards: on a loaded CPU that thread can
    # finish before the judge reads the outputs (a clean-clone make test with other work beside it
    # saw it once: ok, at its twin's speed). Caught, or contained as its EXPECT line allows; on a
    # GPU its work is queued behind the event and the H200 runs caught it every time.
    b04 = "b04_done_before_work"
    got = outcome(b04, res[b04], run["twins"].get(b04), CPU_TOL)
    assert got in ("caught", "contained"), (res[b04], run["twins"].get(b04))
    if got == "caught":
        assert res[b04]["status"] in ("incorrect", "cheat_suspected")


def test_caches_and_the_reference_through_gc_fail(run):
    res = run["results"]
    for name in ("b07_cache_by_statistics", "b08_cache_by_sampled_elements"):
        assert "previous call's result" in res[name]["reason"], res[name]["reason"]
    for name in ("b11_reference_instance_via_gc", "b17_steal_reference_arena"):
        assert res[name]["status"] in ("incorrect", "cheat_suspected"), (name, res[name]["reason"])
    # No reference output lives in the candidate's process: what b12 finds there is no answer
    # (caught), or it finds nothing and computes the answer itself, no faster than its twin.
    b12 = res["b12_reference_outputs_via_gc"]
    assert b12["status"] in ("incorrect", "cheat_suspected") or (
        b12["status"] == "ok"
        and typical_speedup(b12) <= CPU_TOL * typical_speedup(run["twins"]["b12_reference_outputs_via_gc"])), b12


def test_inputs_written_by_the_candidate_are_caught(run):
    for name in ("b22_softmax_in_the_input_buffer", "b23_scribble_on_inputs"):
        assert "modified its inputs in place" in run["results"][name]["reason"]


def test_the_reference_cannot_be_slowed(run):
    res = run["results"]
    for name in ("a04_slow_reference_module_call", "a06_slow_reference_torch_fn_via_sys_modules",
                 "a24_timer_patch_via_sys_modules"):
        assert res[name]["status"] == "cheat_suspected", (name, res[name]["reason"])
    assert "nn.Module.__call__ was replaced" in res["a04_slow_reference_module_call"]["reason"]


def test_no_process_outlives_its_worker(run):
    assert not run["side"]["processes_left"], run["side"]
    res = run["results"]
    for name in ("a12_hidden_subprocess_setsid", "a13_double_fork_setsid"):
        assert "process(es) running" in res[name]["reason"], (name, res[name]["reason"])


def test_the_environment_holds_no_secret(run):
    r = run["results"]["a19_env_secret"]
    assert "key=None" in r["reason"]


def test_oversized_source_is_refused_with_a_reason(run):
    r = run["results"]["oversized_source"]
    assert r["status"] == "compile_error" and "byte limit" in r["reason"]


def test_new_probe_expectations_name_known_outcomes():
    known = {"ok", "contained", "cheat_suspected", "incorrect", "runtime_error", "compile_error", "crashed", "timeout"}
    for path in NEW:
        assert expect(path.stem) <= known and "ok" not in expect(path.stem), path.stem


@pytest.mark.skipif(LANDLOCK < 1, reason="no Landlock on this kernel: writes are not contained here")
def test_writes_outside_the_work_dir_are_refused(run):
    assert not run["side"]["file_written"]
    assert run["side"]["db_rows"] == 5
    assert "Permission" in run["results"]["a16_write_outside_pathlib"]["reason"]


@pytest.mark.skipif(LANDLOCK < 4 and not (sys.platform.startswith("linux") and os.geteuid() == 0),
                    reason="neither Landlock TCP rules nor a network namespace on this machine")
def test_no_connection_leaves_the_worker(run):
    assert run["side"]["connections"] == []


@pytest.mark.skipif(LANDLOCK < 6, reason="Landlock ABI < 6: signals to the parent are not scoped here")
def test_signals_to_the_parent_and_the_judge_are_refused(run):
    for name in ("a14_kill_parent", "a23_ctypes_hidden_kill"):
        assert run["results"][name]["status"] == "runtime_error", (name, run["results"][name]["reason"])
    for name in ("b18_stop_reference_worker", "b29_kill_the_timer"):
        assert run["results"][name]["status"] == "ok", (name, run["results"][name]["reason"])


def test_repeated_runs_are_compared_by_their_medians():
    # One noisy run does not decide; a time forged in every run still fails.
    twin = {"status": "ok", "speedup": 0.6, "speedups": [0.6, 1.1, 0.9]}
    noisy = {"status": "ok", "speedup": 15.4, "speedups": [15.4, 1.0, 0.8]}
    forged = {"status": "ok", "speedup": 9000.0, "speedups": [9000.0, 11000.0, None]}
    assert typical_speedup(noisy) == 1.0 and typical_speedup(forged) == 10000.0
    assert outcome("b01_rescale_worker_timers", noisy, twin, CPU_TOL) == "contained"
    assert outcome("b01_rescale_worker_timers", forged, twin, CPU_TOL) == "failed"
    # Without repeats the one speedup is used, as in the GPU benchmark's rows.
    assert outcome("b01_rescale_worker_timers", {"status": "ok", "speedup": 15.4}, {"status": "ok", "speedup": 0.6},
                   CPU_TOL) == "failed"
