"""Stop and Pause act at once, even in the middle of a slow step; a fit in a child process is
killed at once; a measurement that comes back after a stop is kept, never faked."""
from __future__ import annotations

import threading
import time
from concurrent.futures import Future

import pytest

from workbench.ui.interrupt import Gate, Interrupted
from workbench.ui.jobs import BackgroundJobs, ChildJob, JobError


def test_a_call_waiting_on_a_closed_gate_raises_at_once():
    gate = Gate()
    release = threading.Event()
    threading.Timer(0.3, gate.close).start()
    t0 = time.monotonic()
    with pytest.raises(Interrupted):
        gate.call(release.wait, 30)
    assert time.monotonic() - t0 < 2.0
    release.set()
    with pytest.raises(Interrupted):  # a closed gate starts nothing
        gate.call(lambda: 1)


def test_a_call_returns_its_value_and_raises_its_error():
    gate = Gate()
    assert gate.call(lambda a, b=0: a + b, 2, b=3) == 5
    with pytest.raises(ZeroDivisionError):
        gate.call(lambda: 1 / 0)


def test_a_measurement_that_comes_back_after_the_stop_is_kept():
    gate, kept = Gate(), []
    real: Future = Future()
    proxy = gate.track(real, kept.append)
    gate.close()
    with pytest.raises(Interrupted):
        proxy.result(timeout=1)
    assert gate.pending() == 1
    real.set_result("a real measurement")
    assert kept == ["a real measurement"] and gate.pending() == 0 and gate.wait_pending(1)
    done: Future = Future()
    other = Gate().track(done, kept.append)  # answered before any stop: mirrored, not kept twice
    done.set_result("m2")
    assert other.result(timeout=1) == "m2" and kept == ["a real measurement"]


def test_a_child_job_reports_progress_and_its_value():
    from pathlib import Path

    import workbench.problems

    said = []
    path = Path(workbench.problems.__file__).parent / "library" / "level1" / "01_softmax.py"
    value = ChildJob("workbench.ui.tasks:load_problem", {"path": str(path)}, said.append).run(timeout_s=120)
    assert value["id"] == "L1/01_softmax" and any("loading" in m for m in said)


def test_a_child_job_is_killed_at_once_and_its_errors_are_messages(tmp_path):
    bad = tmp_path / "99_bad.py"
    bad.write_text("raise RuntimeError('<b>broken</b>')\n")
    with pytest.raises(JobError, match="broken|Model"):
        ChildJob("workbench.ui.tasks:load_problem", {"path": str(bad)}).run(timeout_s=120)
    slow = tmp_path / "98_slow.py"
    slow.write_text("import time\nimport torch\nclass Model(torch.nn.Module):\n    pass\n"
                    "def get_inputs():\n    return []\ndef get_init_inputs():\n    return []\ntime.sleep(600)\n")
    gate = Gate()
    threading.Timer(4.0, gate.close).start()
    t0 = time.monotonic()
    with pytest.raises(Interrupted):
        ChildJob("workbench.ui.tasks:load_problem", {"path": str(slow)}).run(gate)
    assert time.monotonic() - t0 < 15.0
    with pytest.raises(JobError, match="more than 3 s"):
        ChildJob("workbench.ui.tasks:load_problem", {"path": str(slow)}).run(timeout_s=3)
    with pytest.raises(ValueError):
        __import__("workbench.ui.jobs", fromlist=["x"])._resolve("os:system")  # only workbench functions


def test_background_jobs_cancel_at_once_and_can_run_again():
    jobs = BackgroundJobs()
    release = threading.Event()
    assert jobs.submit("j", lambda: release.wait(30))
    assert not jobs.submit("j", lambda: None)  # running: not twice
    jobs.cancel("j")
    assert jobs.status("j") == "cancelled"
    release.set()
    jobs.join("j", 5)
    assert jobs.submit("j", lambda: None)  # a cancelled job may be started again
    jobs.join("j", 5)
    assert jobs.status("j") == "done" and jobs.elapsed_s("j") >= 0
