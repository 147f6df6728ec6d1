"""Every cheating pattern in fixtures/cheats/ is rejected or flagged, through the real
sandboxed CPU executor (Triton interpreter); honest fixtures are not flagged."""
from __future__ import annotations

import pytest

from exec_fixtures import CPU_OPTIONS, load_fixtures
from workbench.execution.executors import CPUExecutor
from workbench.records import Status

CHEATS = load_fixtures("cheats")
HONEST = load_fixtures("honest")


@pytest.fixture(scope="module")
def cheat_results():
    with CPUExecutor(workers=2, timeout_s=60, options=CPU_OPTIONS) as ex:
        futures = [ex.submit(f.problem, [f.candidate])[0] for f in CHEATS]
        return {f.name: fut.result(timeout=600) for f, fut in zip(CHEATS, futures)}


def test_there_is_a_fixture_per_pattern():
    names = {f.name for f in CHEATS}
    patterns = {"reuse_reference_output", "input_mutation", "side_stream", "background_thread",
                "lazy_subclass", "timer_patch", "torch_patch", "cache_across_calls", "cache_by_pointer",
                "try_except_fallback", "calls_reference_op", "precision_tf32", "constant_output",
                "zeros_output", "nan_output", "one_shape_only", "implausible_speedup"}
    assert patterns <= names
    assert len(CHEATS) >= 15


@pytest.mark.parametrize("fixture", CHEATS, ids=[f.name for f in CHEATS])
def test_cheat_is_caught(fixture, cheat_results):
    m = cheat_results[fixture.name]
    assert m.status is not Status.OK, f"{fixture.name} passed as ok"
    assert m.status.value in fixture.expect, (m.status.value, m.reason)
    assert m.reason, "a rejection must say why"
    assert m.speedup is None


def test_dynamic_guards_catch_what_static_reading_misses(cheat_results):
    # These fixtures hide from the AST checks; the runtime snapshot must be what fired.
    assert "thread" in cheat_results["background_thread_hidden"].reason
    assert "torch.isclose was replaced" in cheat_results["torch_patch_hidden"].reason
    assert "on import: time.perf_counter was replaced" in cheat_results["timer_patch_hidden"].reason
    assert "previous call's result" in cheat_results["cache_across_calls"].reason
    assert "precision was lowered" in cheat_results["precision_bf16"].reason
    assert "second shape" in cheat_results["one_shape_only"].reason


def test_honest_fixtures_are_not_flagged():
    with CPUExecutor(workers=2, timeout_s=120, options=CPU_OPTIONS) as ex:
        results = [ex.submit(f.problem, [f.candidate])[0] for f in HONEST]
        bad = {f.name: (m.status.value, m.reason) for f, m in
               ((f, fut.result(timeout=600)) for f, fut in zip(HONEST, results)) if not m.ok}
    assert not bad, bad


@pytest.mark.gpu
@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs a CUDA GPU")
def test_cheats_are_caught_on_gpu():
    from workbench.execution.executors import LocalGPUExecutor

    with LocalGPUExecutor(gpus=[0], workers=8, timeout_s=120) as ex:
        futures = [ex.submit(f.problem, [f.candidate])[0] for f in CHEATS]
        results = {f.name: fut.result() for f, fut in zip(CHEATS, futures)}
    passed = {n: m.reason for n, m in results.items() if m.ok}
    assert not passed, passed
    # On a GPU the caching allocator would hand the reference's freed output to the
    # candidate; the poisoned block makes that show as NaN garbage.
    assert results["reuse_reference_output"].status in (Status.INCORRECT, Status.CHEAT_SUSPECTED)
