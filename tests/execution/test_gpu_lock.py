"""The GPU lock protocol with real processes: readers share, a timer is alone, and a timer
is not starved by readers that keep coming (the turnstile)."""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from workbench.execution.gpu_lock import GpuLock

ROOT = Path(__file__).resolve().parents[2]

# Each script waits for an absolute start time T0 so process start-up does not skew the
# schedule, then logs "<name> <+|-> <time.time()>" lines around its lock holds.
_COMMON = """
import fcntl, os, sys, time
from workbench.execution.gpu_lock import GpuLock
lock, log, t0 = sys.argv[1], sys.argv[2], float(sys.argv[3])
def note(name, sign):
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    os.write(fd, f"{name} {sign} {time.time():.6f}\\n".encode())
    os.close(fd)
"""
READER = _COMMON + """
name, offset, hold, until = sys.argv[4], float(sys.argv[5]), float(sys.argv[6]), float(sys.argv[7])
time.sleep(max(0.0, t0 + offset - time.time()))
while time.time() < t0 + until:
    with GpuLock(lock).shared():
        note(name, "+")
        time.sleep(hold)
        note(name, "-")
"""
TIMER = _COMMON + """
at, hold, raw = float(sys.argv[4]), float(sys.argv[5]), sys.argv[6] == "raw"
time.sleep(max(0.0, t0 + at - time.time()))
note("W", "?")
if raw:  # plain LOCK_EX with no turnstile: the protocol without its starvation guard
    with open(lock, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        note("W", "+"); time.sleep(hold); note("W", "-")
else:
    with GpuLock(lock).exclusive():
        note("W", "+"); time.sleep(hold); note("W", "-")
"""


def _events(procs: list, log: Path) -> dict[str, list[tuple[str, float]]]:
    """Wait for the processes, then each name's (sign, time) events from the log."""
    for p in procs:
        assert p.wait(timeout=30) == 0
    events: dict[str, list[tuple[str, float]]] = {}
    for line in log.read_text().splitlines():
        name, sign, t = line.split()
        events.setdefault(name, []).append((sign, float(t)))
    return events


def _schedule(tmp_path: Path, raw: bool) -> dict[str, list[tuple[str, float]]]:
    """Three readers holding 0.15 s each, staggered so one is always inside, from T0 to
    T0 + 2 s; a timer asks at T0 + 0.5 s and holds 0.2 s. Returns each name's events."""
    lock, log = tmp_path / "gpu0.lock", tmp_path / "events.log"
    t0 = time.time() + 1.5
    procs = [subprocess.Popen([sys.executable, "-c", READER, str(lock), str(log), str(t0), f"R{i}",
                               str(0.05 * i), "0.15", "2.0"], cwd=ROOT) for i in range(3)]
    procs.append(subprocess.Popen([sys.executable, "-c", TIMER, str(lock), str(log), str(t0), "0.5", "0.2",
                                   "raw" if raw else "protocol"], cwd=ROOT))
    return _events(procs, log)


def _intervals(evs: list[tuple[str, float]]) -> list[tuple[float, float]]:
    starts = [t for s, t in evs if s == "+"]
    ends = [t for s, t in evs if s == "-"]
    assert len(starts) == len(ends)
    return list(zip(starts, ends))


def test_timer_is_alone_readers_share_and_the_timer_is_not_starved(tmp_path):
    ev = _schedule(tmp_path, raw=False)
    (w_start, w_end), = _intervals(ev["W"])
    asked = next(t for s, t in ev["W"] if s == "?")
    readers = [iv for name in ("R0", "R1", "R2") for iv in _intervals(ev[name])]
    # Exclusive: no reader inside while the timer holds the lock.
    assert not [iv for iv in readers if iv[0] < w_end and w_start < iv[1]]
    # Shared: readers were inside at the same time.
    assert any(a[0] < b[1] and b[0] < a[1] for i, a in enumerate(readers) for b in readers[i + 1:])
    # No starvation: the timer waits for the readers already inside (0.15 s holds), not for
    # the readers to stop coming (they go on until T0 + 2 s, 1.5 s after it asked).
    assert w_start - asked < 0.6, w_start - asked
    assert any(iv[0] > w_end for iv in readers)  # and readers came back after it


def test_without_the_turnstile_readers_starve_the_timer(tmp_path):
    # The same schedule with a plain LOCK_EX: the check above would catch a missing turnstile.
    ev = _schedule(tmp_path, raw=True)
    (w_start, _), = _intervals(ev["W"])
    asked = next(t for s, t in ev["W"] if s == "?")
    assert w_start - asked > 1.0


def test_phases_are_reported_around_holds(tmp_path):
    seen: list[str] = []
    lock = GpuLock(str(tmp_path / "gpu0.lock"), on_phase=seen.append)
    with lock.shared():
        pass
    with lock.exclusive():
        pass
    assert seen == ["wait-gpu", "checking", "checking", "wait-gpu", "timing", "checking"]
    # No path: no locking, the same phases (CPU runs).
    seen.clear()
    with GpuLock(None, on_phase=seen.append).exclusive():
        pass
    assert seen == ["wait-gpu", "timing", "checking"]


COMPILER = _COMMON + """
step = sys.argv[4] == "step"
gpu = GpuLock(lock)
time.sleep(max(0.0, t0 - time.time()))
with gpu.shared():
    note("R", "+"); time.sleep(0.1)
    if step:
        gpu.step_out(); note("R", "-")
    time.sleep(1.5)  # a Triton compile: CPU only
    if step:
        gpu.step_in(); note("R", "+")
    time.sleep(0.1)
    note("R", "-")
"""


def _compile_schedule(tmp_path: Path, step: bool) -> dict[str, list[tuple[str, float]]]:
    """A reader inside shared() for 1.7 s, 1.5 s of it compiling (stepping out when `step`); a
    timer asks at T0 + 0.3 s and holds 0.2 s."""
    lock, log = tmp_path / "gpu0.lock", tmp_path / "events.log"
    t0 = time.time() + 1.5
    procs = [subprocess.Popen([sys.executable, "-c", COMPILER, str(lock), str(log), str(t0),
                               "step" if step else "stay"], cwd=ROOT),
             subprocess.Popen([sys.executable, "-c", TIMER, str(lock), str(log), str(t0), "0.3", "0.2",
                               "protocol"], cwd=ROOT)]
    return _events(procs, log)


def test_a_reader_that_steps_out_to_compile_does_not_hold_up_a_timer(tmp_path):
    ev = _compile_schedule(tmp_path, step=True)
    (w_start, w_end), = _intervals(ev["W"])
    asked = next(t for s, t in ev["W"] if s == "?")
    inside = _intervals(ev["R"])          # the reader's GPU holds: before and after its compile
    assert len(inside) == 2
    assert w_start - asked < 0.5, w_start - asked   # not the 1.4 s left of the reader's stay
    assert not [iv for iv in inside if iv[0] < w_end and w_start < iv[1]]


def test_a_reader_that_stays_in_while_compiling_holds_up_a_timer(tmp_path):
    # The control: the same reader without stepping out keeps the timer waiting to its end.
    ev = _compile_schedule(tmp_path, step=False)
    (w_start, _), = _intervals(ev["W"])
    (_, r_end), = _intervals(ev["R"])
    asked = next(t for s, t in ev["W"] if s == "?")
    assert w_start >= r_end and w_start - asked > 1.0


def test_stepping_out_is_only_for_shared_holds(tmp_path):
    seen: list[str] = []
    lock = GpuLock(str(tmp_path / "gpu0.lock"), on_phase=seen.append)
    lock.step_out(), lock.step_in()              # outside any hold: nothing
    with lock.exclusive():
        lock.step_out(), lock.step_in()          # a timed region keeps its lock
    assert seen == ["wait-gpu", "timing", "checking"]
    seen.clear()
    with lock.shared():
        lock.step_in()                           # not out: nothing
        lock.step_out()
        lock.step_out()                          # already out: nothing
        lock.step_in()
    assert seen == ["wait-gpu", "checking", "wait-gpu", "checking", "checking"]
