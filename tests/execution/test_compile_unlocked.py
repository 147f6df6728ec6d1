"""compile_unlocked: Triton's compile steps a worker out of its shared GPU hold and back."""
from __future__ import annotations

import fcntl
import threading

import pytest

triton = pytest.importorskip("triton")
import triton.compiler  # noqa: E402

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
def fake_compile(monkeypatch):
    """Triton's compile replaced by one that records whether a timer could get in while it ran
    (and raises when asked to); the worker's stand-in is installed over it as in a fresh process."""
    seen: list[bool] = []

    def compile(src, target=None, options=None, *, path, fail=False):
        seen.append(_timer_gets_in(path))
        if fail:
            raise RuntimeError("PassManager::run failed")
        return f"kernel({src})"

    monkeypatch.setattr(triton.compiler, "compile", compile)
    monkeypatch.setattr(worker, "_TRITON_COMPILE", None)
    yield seen
    worker.compile_outside_lock(None)


def _jit_compile():
    """How a @triton.jit kernel finds the compile it calls (JITFunction.create_binder)."""
    from triton.compiler import compile

    return compile


def test_triton_kernels_read_the_compile_they_call_from_triton_compiler():
    """The stand-in works only while Triton's JIT imports `compile` from triton.compiler when a
    kernel first runs; this Triton must still do so."""
    import inspect

    from triton.runtime.jit import JITFunction

    src = inspect.getsource(JITFunction.create_binder)
    assert "from ..compiler import" in src and "self.compile = compile" in src


def test_a_compile_steps_out_and_back(tmp_path, fake_compile):
    path = str(tmp_path / "gpu0.lock")
    gpu = GpuLock(path)
    worker.compile_outside_lock(gpu)
    with gpu.shared():
        assert not _timer_gets_in(path)
        assert _jit_compile()("src", path=path) == "kernel(src)"
        assert fake_compile == [True]               # a timer could get in during the compile
        assert not _timer_gets_in(path)             # and the check holds the GPU again after it
    assert _timer_gets_in(path)


def test_a_failed_compile_steps_back_in(tmp_path, fake_compile):
    path = str(tmp_path / "gpu0.lock")
    gpu = GpuLock(path)
    worker.compile_outside_lock(gpu)
    with gpu.shared():
        with pytest.raises(RuntimeError, match="PassManager"):
            _jit_compile()("src", path=path, fail=True)
        assert fake_compile == [True]
        assert not _timer_gets_in(path)             # GPU work after the error is held back again


def test_a_compile_while_already_stepped_out_leaves_the_stepping_in_to_whoever_stepped_out(tmp_path, fake_compile):
    """The Inductor capture steps out for a whole torch.compile (workbench.seeds.inductor): a
    Triton compile inside it must not step back in half-way through."""
    path = str(tmp_path / "gpu0.lock")
    gpu = GpuLock(path)
    worker.compile_outside_lock(gpu)
    with gpu.shared():
        gpu.step_out()
        assert gpu.stepped_out
        _jit_compile()("src", path=path)
        assert gpu.stepped_out and _timer_gets_in(path)   # still out after the compile
        gpu.step_in()
        assert not gpu.stepped_out and not _timer_gets_in(path)
    assert not gpu.stepped_out


def test_without_the_option_or_off_the_main_thread_a_compile_keeps_the_hold(tmp_path, fake_compile):
    path = str(tmp_path / "gpu0.lock")
    gpu = GpuLock(path)
    worker.compile_outside_lock(gpu)
    worker.compile_outside_lock(None)            # the next job measures without compile_unlocked
    with gpu.shared():
        _jit_compile()("src", path=path)
    worker.compile_outside_lock(gpu)
    with gpu.shared():                           # an async-mode compile on a pool thread
        t = threading.Thread(target=_jit_compile(), args=("src",), kwargs={"path": path})
        t.start()
        t.join()
    with gpu.exclusive():                        # a timed region is never stepped out of
        _jit_compile()("src", path=path)
    assert fake_compile == [False, False, False]


def test_installed_once_for_the_process(tmp_path, fake_compile):
    gpu = GpuLock(str(tmp_path / "gpu0.lock"))
    worker.compile_outside_lock(gpu)
    worker.compile_outside_lock(None)
    worker.compile_outside_lock(gpu)
    assert triton.compiler.compile is worker._compile_stepping_out
    assert worker._TRITON_COMPILE is not worker._compile_stepping_out   # never wraps itself


def test_the_option_round_trips_and_defaults_on():
    assert MeasureOptions().compile_unlocked is True
    opts = MeasureOptions.from_dict({"compile_unlocked": False})
    assert opts.compile_unlocked is False and MeasureOptions.from_dict(opts.to_dict()) == opts
