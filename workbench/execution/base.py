"""The executor interface: measure candidates, never raise for a bad candidate.

This module (like all of `workbench.execution`) imports only the standard library, torch,
triton and numpy, so it runs on a bare GPU image with `PYTHONPATH=.`.
"""
from __future__ import annotations

import abc
from concurrent.futures import Future
from typing import Iterable, Sequence

from workbench.records import Candidate, Hardware, Measurement, Problem


class Executor(abc.ABC):
    """Measures candidates against their problem's reference on one kind of hardware.

    `submit` returns at once with one Future per candidate; each Future resolves to a
    Measurement whose status says what happened (ok, compile_error, ..., crashed). A bad
    candidate is a status, never an exception; only misuse of the executor raises.
    """

    #: The hardware this executor measures on (or replays, for the cache executor).
    hardware: Hardware

    @abc.abstractmethod
    def submit(self, problem: Problem, candidates: Sequence[Candidate]) -> list[Future[Measurement]]:
        """Queue candidates of one problem for measurement."""

    @property
    def capacity(self) -> int:
        """Candidates this executor works on at once (its workers); a pipelined search keeps
        this many with it. 1 unless the executor says otherwise."""
        return 1

    def measure(self, problem: Problem, candidates: Sequence[Candidate]) -> list[Measurement]:
        """Blocking convenience: submit and wait for every result, in input order."""
        return [f.result() for f in self.submit(problem, candidates)]

    def close(self) -> None:
        """Stop workers and release resources. Idempotent."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def done_future(m: Measurement) -> Future[Measurement]:
    f: Future[Measurement] = Future()
    f.set_result(m)
    return f


def all_results(futures: Iterable[Future[Measurement]]) -> list[Measurement]:
    return [f.result() for f in futures]
