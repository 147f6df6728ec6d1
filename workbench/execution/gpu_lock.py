"""Shared/exclusive admission to one GPU across worker processes, with two lock files.

A timed region must see the GPU alone: another process's correctness check, compile-time
launch or input generation running at the same moment slows the timed kernel down by an
amount that depends on what the neighbours happen to be doing, which is how the same
candidate came to be timed differently in two processes. So:

- GPU work that may overlap other GPU work (building models, correctness checks, the first
  launches that compile Triton kernels) holds `LOCK_SH` on the GPU's lock file: any number
  of such readers at once, so compiling and checking stay parallel.
- A timed region holds `LOCK_EX` on the same file: no reader and no other timer inside.

`flock` has no writer preference: with readers arriving all the time a timer waiting for
`LOCK_EX` could wait forever. A second file, the turnstile, fixes that. A reader passes the
turnstile (takes `LOCK_EX` on it and drops it at once) before asking for `LOCK_SH`; a timer
takes the turnstile and keeps it until it holds `LOCK_EX`. While a timer waits, new readers
stop at the turnstile, the readers already inside finish, and the timer gets in after the
longest of them. Timers queue on the turnstile among themselves.

A reader may step out for CPU-only work and come back (`step_out` / `step_in`, used around a
Triton compile, which can take seconds): while it is out a waiting timer need not wait for it,
and it comes back through the turnstile like a new reader.

Locks belong to open file descriptions, so they are released when the holder exits or is
killed (a crashed worker never leaves the GPU locked). Not reentrant: a process must not ask
for the lock while it holds it (each request opens the file anew and would wait for itself).
Standard library only.
"""
from __future__ import annotations

import contextlib
import fcntl
from typing import Callable, Iterator

#: Phase names reported to the parent over the worker's channel (see verdict.PhaseBudget): waiting for the GPU has no
#: time budget; "checking" counts against the compile/correctness budget; "timing" against
#: the timing budget.
WAITING, CHECKING, TIMING = "wait-gpu", "checking", "timing"


def turnstile_path(lock_path: str) -> str:
    return lock_path + ".turnstile"


class GpuLock:
    """The reader/writer protocol above on `lock_path` (None: no locking, phases only).

    `on_phase(name)` is told when the holder starts waiting, gets in, and leaves, so the
    parent can stop the clock of the compile budget while a worker only waits for the GPU.
    """

    def __init__(self, lock_path: str | None, on_phase: Callable[[str], None] | None = None):
        self.path = lock_path
        self._on_phase = on_phase or (lambda name: None)
        self._reader = None      # the lock file while inside shared(), else None
        self._out = False        # stepped out of shared() (step_out) and not back yet

    def step_out(self) -> None:
        """Inside `shared()`: drop the shared lock for CPU-only work (no GPU work until
        `step_in`). Anywhere else (outside, inside `exclusive()`, already out): nothing."""
        if self._reader is not None and not self._out:
            fcntl.flock(self._reader, fcntl.LOCK_UN)
            self._out = True

    @property
    def stepped_out(self) -> bool:
        """Inside `shared()` and stepped out of it (`step_out`, no `step_in` since)."""
        return self._reader is not None and self._out

    def step_in(self) -> None:
        """Back into `shared()` after `step_out`: through the turnstile (a waiting timer goes
        first), then the shared lock again. Without a `step_out` before: nothing."""
        if self._reader is not None and self._out:
            self._on_phase(WAITING)
            with open(turnstile_path(self.path), "a+") as gate:
                fcntl.flock(gate, fcntl.LOCK_EX)
                fcntl.flock(gate, fcntl.LOCK_UN)
            fcntl.flock(self._reader, fcntl.LOCK_SH)
            self._out = False
            self._on_phase(CHECKING)

    @contextlib.contextmanager
    def shared(self) -> Iterator[None]:
        """GPU work that may overlap other GPU work but never a timed region."""
        self._on_phase(WAITING)
        if not self.path:
            self._on_phase(CHECKING)
            yield
            return
        with open(turnstile_path(self.path), "a+") as gate:
            fcntl.flock(gate, fcntl.LOCK_EX)
            fcntl.flock(gate, fcntl.LOCK_UN)
        with open(self.path, "a+") as fh:
            fcntl.flock(fh, fcntl.LOCK_SH)
            self._on_phase(CHECKING)
            self._reader, self._out = fh, False
            try:
                yield
            finally:
                self._reader, self._out = None, False
                fcntl.flock(fh, fcntl.LOCK_UN)
                self._on_phase(CHECKING)

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        """A timed region: the GPU is free of every other holder of this lock."""
        self._on_phase(WAITING)
        if not self.path:
            self._on_phase(TIMING)
            try:
                yield
            finally:
                self._on_phase(CHECKING)
            return
        with open(self.path, "a+") as fh:
            with open(turnstile_path(self.path), "a+") as gate:
                fcntl.flock(gate, fcntl.LOCK_EX)
                try:
                    fcntl.flock(fh, fcntl.LOCK_EX)
                finally:
                    fcntl.flock(gate, fcntl.LOCK_UN)
            self._on_phase(TIMING)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)
                self._on_phase(CHECKING)
