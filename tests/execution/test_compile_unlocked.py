"""compile_unlocked: Triton's compile hooks step a worker out of its shared GPU hold and back."""
from __future__ import annotations

import fcntl

import pytest

triton = pytest.importorskip("triton")
from triton import knobs  # noqa: E402

from workbench.execution import worker  # noqa: E402
from workbench.execution.gpu_lock import GpuLock  # noqa: E402
from workbench.execution.job import MeasureOptions  # noqa: E402


def _timer_gets_in(path: str) -> bool:
    """Could a timer (another open file description) take the lock exclusively right now?"""
    with open(path, "a+") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(fh, fcntl.LOCK_UN)
        return True


@pytest.fixture
def hooks(monkeypatch):
    monkeypatch.setattr(knobs.runtime, "jit_cache_hook", None)
    monkeypatch.setattr(knobs.runtime, "jit_post_compile_hook", None)
    yield knobs.runtime
    worker.compile_outside_lock(None)


def test_the_hooks_step_out_for_the_compile_and_back(tmp_path, hooks):
    path = str(tmp_path / "gpu0.lock")
    gpu = GpuLock(path)
    worker.compile_outside_lock(gpu)
    with gpu.shared():
        assert not _timer_gets_in(path)
        # What Triton's _do_compile calls, with its keyword arguments.
        assert hooks.jit_cache_hook(key="k", repr="kernel", fn=None, compile={}, is_manual_warmup=False,
                                    already_compiled=False) is None   # None: Triton goes on to compile
        assert _timer_gets_in(path)
        hooks.jit_post_compile_hook(key="k", repr="kernel", fn=None, compile={}, is_manual_warmup=False,
                                    already_compiled=False)
        assert not _timer_gets_in(path)
    assert _timer_gets_in(path)


def test_without_the_option_a_compile_keeps_the_hold(tmp_path, hooks):
    path = str(tmp_path / "gpu0.lock")
    gpu = GpuLock(path)
    worker.compile_outside_lock(gpu)
    worker.compile_outside_lock(None)            # the next job measures without compile_unlocked
    with gpu.shared():
        hooks.jit_cache_hook(key="k")
        assert not _timer_gets_in(path)
        hooks.jit_post_compile_hook(key="k")
    with gpu.exclusive():                        # a timed region is never stepped out of
        worker.compile_outside_lock(gpu)
        hooks.jit_cache_hook(key="k")
        assert not _timer_gets_in(path)


def test_the_option_round_trips_and_defaults_off():
    assert MeasureOptions().compile_unlocked is False
    opts = MeasureOptions.from_dict({"compile_unlocked": True})
    assert opts.compile_unlocked is True and MeasureOptions.from_dict(opts.to_dict()) == opts
