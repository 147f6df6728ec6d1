"""The timer's session on a GPU another worker is using (timer._Server._quiet_session): other
workers are stopped until the GPU is idle, a slowed reference beside running neighbours is
timed again with them stopped, and a GPU that never goes idle is reported, not blamed. The
others are read live (timer.Others over the executor's WorkerRegistry): a worker started
while a session runs is stopped too."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from workbench.execution import gate, timer
from workbench.execution.verdict import BUSY_RATIO


class FakeFreezer:
    def __init__(self, log: list, name: str):
        self.log, self.name, self.stopped = log, name, []

    def freeze(self):
        self.stopped = [1]
        self.log.append(("freeze", self.name))

    def thaw(self):
        self.stopped = []
        self.log.append(("thaw", self.name))


class Cand:
    def __init__(self, log):
        self.freezer = FakeFreezer(log, "cand")


def server(ratios: list[float]) -> timer._Server:
    s = timer._Server.__new__(timer._Server)
    seq = iter(ratios)
    last = [ratios[-1]]

    def busy():
        last[0] = next(seq, last[0])
        return last[0]

    s.busy = busy
    return s


def runner(log: list, others: list, reports: list[dict]):
    it = iter(reports)

    def run():
        log.append(("run", tuple(bool(o.stopped) for o in others)))
        return dict(next(it))
    return run


def live(fakes: list[FakeFreezer]) -> timer.Others:
    """timer.Others over fake freezers, named by the request as pids 1, 2, ..."""
    by_pid = {i + 1: f for i, f in enumerate(fakes)}
    return timer.Others(by_pid.__getitem__, list(by_pid))


def test_idle_gpu_runs_once_with_others_going():
    log: list = []
    others = [FakeFreezer(log, "w1"), FakeFreezer(log, "w2")]
    rep = server([1.0])._quiet_session(runner(log, others, [{"status": "ok"}]), Cand(log), live(others))
    assert rep == {"status": "ok"}
    assert log == [("run", (False, False))]          # never stopped, so nothing to let go


def test_busy_gpu_stops_the_others_through_the_session():
    log: list = []
    others = [FakeFreezer(log, "w1")]
    rep = server([BUSY_RATIO + 2, BUSY_RATIO + 1, 1.0])._quiet_session(
        runner(log, others, [{"status": "ok"}]), Cand(log), live(others))
    assert rep["status"] == "ok"
    assert log.index(("freeze", "w1")) < log.index(("run", (True,)))
    assert log[-1] == ("thaw", "w1")


def test_gpu_busy_with_everyone_stopped_is_not_the_candidates_verdict(monkeypatch):
    monkeypatch.setattr(timer, "IDLE_WAIT_S", 0.2)
    log: list = []
    others = [FakeFreezer(log, "w1")]
    rep = server([BUSY_RATIO * 3])._quiet_session(runner(log, others, [{"status": "ok"}]), Cand(log), live(others))
    assert rep["status"] == "timeout" and "stayed busy" in rep["reason"]
    assert not any(e[0] == "run" for e in log)
    assert log[-1] == ("thaw", "w1") and ("thaw", "cand") in log


def test_slowed_reference_beside_running_others_is_timed_again_with_them_stopped():
    log: list = []
    others = [FakeFreezer(log, "w1")]
    flagged = {"status": "ok", "retime": {"reference": [2.0]}, "reason": "slowed"}
    rep = server([1.0])._quiet_session(runner(log, others, [flagged, {"status": "ok"}]), Cand(log), live(others))
    assert [e for e in log if e[0] == "run"] == [("run", (False,)), ("run", (True,))]
    assert rep["status"] == "ok" and "slowed" in rep["rerun"]


def test_slowed_reference_with_others_already_stopped_stands():
    log: list = []
    others = [FakeFreezer(log, "w1")]
    flagged = {"status": "ok", "retime": {"reference": [2.0]}, "reason": "slowed"}
    rep = server([BUSY_RATIO + 1, 1.0])._quiet_session(runner(log, others, [flagged]), Cand(log), live(others))
    assert rep is not None and "retime" in rep and "rerun" not in rep
    assert sum(e[0] == "run" for e in log) == 1


def test_no_busy_probe_on_the_cpu_runs_once():
    s = timer._Server.__new__(timer._Server)
    s.busy = None
    log: list = []
    others = [FakeFreezer(log, "w1")]
    flagged = {"status": "ok", "retime": {"reference": [2.0]}}
    assert s._quiet_session(runner(log, others, [flagged]), Cand(log), live(others)) == flagged
    assert log == [("run", (False,))]


@pytest.fixture
def worker_tree():
    """(supervisor pid, its child's pid): a process tree like a chunk worker's."""
    from workbench.execution.contain import _children

    sup = subprocess.Popen([sys.executable, "-c", "import subprocess, sys, time; "
                            "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); time.sleep(60)"])
    try:
        end = time.monotonic() + 10
        while not _children(sup.pid) and time.monotonic() < end:
            time.sleep(0.05)
        (kid,) = _children(sup.pid)
        yield sup.pid, kid
        os.kill(kid, signal.SIGCONT)
        os.kill(kid, signal.SIGKILL)
    finally:
        sup.kill()
        sup.wait()


def _stopped(pid: int) -> bool:
    return gate._state(pid) in ("T", "t")


def test_freezer_of_another_worker_stops_its_processes_not_its_supervisor(worker_tree):
    """The real Freezer on a process tree like a worker's: the supervisor (root) keeps
    running, its descendants stop and go on again."""
    sup, kid = worker_tree
    f = gate.Freezer(sup)
    f.freeze()
    assert _stopped(kid) and not _stopped(sup)
    f.thaw()
    time.sleep(0.1)
    assert not _stopped(kid)


def test_registry_file_follows_the_executors_workers(tmp_path):
    reg = timer.WorkerRegistry(str(tmp_path / "workers"))
    assert timer.read_registry(reg.path) == set()
    reg.add(41)
    reg.add(7)
    assert timer.read_registry(reg.path) == {7, 41} and list(reg) == [7, 41]
    reg.discard(41)
    assert timer.read_registry(reg.path) == {7}
    assert timer.read_registry(str(tmp_path / "missing")) == set() and timer.read_registry(None) == set()


def test_a_worker_registered_during_a_session_is_stopped_at_the_next_round(tmp_path):
    log: list = []
    fakes = {pid: FakeFreezer(log, f"w{pid}") for pid in (1, 2, 3, 9)}
    reg = timer.WorkerRegistry(str(tmp_path / "workers"))
    reg.add(1)
    reg.add(9)                      # the session's own candidate: never stopped as an "other"
    others = timer.Others(fakes.__getitem__, [1], reg.path, exclude=9)
    others.keep()                   # not frozen: nothing happens
    assert log == []
    others.freeze()
    assert ("freeze", "w1") in log and not fakes[9].stopped
    reg.add(2)                      # started after the session stopped the others
    others.keep()
    assert fakes[2].stopped
    reg.add(3)
    others.thaw()
    others.keep()                   # thawed: a later worker is left alone
    assert not fakes[3].stopped and not any(f.stopped for f in fakes.values())


def test_session_keeps_the_others_stopped_each_round():
    """Session calls `hold` at every round and alone timing (the timer's Others.keep)."""
    from tests.execution.test_session import _judge, _softmax

    calls = [0]

    def hold():
        calls[0] += 1
    r = _judge(_softmax, hold=hold)
    assert r["status"] == "ok", r["reason"]
    rounds = len(r["samples"]["reference"]) + len(r["alone"]["reference"])
    assert calls[0] >= rounds


def test_live_others_stop_a_worker_started_after_the_request(tmp_path, worker_tree):
    """Real processes: a worker tree that appears in the registry after Others was made (the
    request's list did not name it) has its processes stopped by the next freeze."""
    sup, kid = worker_tree
    reg = timer.WorkerRegistry(str(tmp_path / "workers"))
    others = timer.Others(gate.Freezer, [], reg.path)
    assert not others
    others.freeze()
    assert not _stopped(kid)                         # not registered yet
    reg.add(sup)
    others.keep()
    assert _stopped(kid)
    others.thaw()
    time.sleep(0.1)
    assert not _stopped(kid)
