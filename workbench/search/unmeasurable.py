"""Candidates the executor cannot measure (a replay asked for a kernel it holds no recording of):
how the search loop leaves them out and when it gives up. See loop.py's module doc."""
from __future__ import annotations

from workbench.records import Candidate
from workbench.search import events as ev

#: Finish reason of a run whose generator keeps proposing only kernels the executor cannot measure.
UNMEASURABLE_END = ("the executor cannot measure what the generator proposes: {n} steps in a row planned only "
                    "kernels with no recording on {gpu} (a replay answers only recorded kernels; search on a "
                    "GPU to measure new ones)")


class UnmeasurableMixin:
    """SearchRun's handling of unmeasurable candidates (uses its `executor`, `hardware`,
    `unmeasurable`, `unmeasurable_steps`, per-step counters and `_emit`)."""

    def _unmeasurable_streak(self) -> int:
        """The `unmeasurable_steps` count after this step: +1 when it planned measurements and
        every one was unmeasurable, 0 when it measured anything, unchanged otherwise."""
        if self._step_submitted:
            return 0
        return self.unmeasurable_steps + 1 if self._step_unmeasurable else self.unmeasurable_steps

    def _unmeasurable_end(self) -> str:
        return UNMEASURABLE_END.format(n=self.unmeasurable_steps, gpu=self.hardware.key.upper())

    def _measurable(self, queue: list[Candidate]) -> list[Candidate]:
        """`queue` without the candidates the executor cannot measure; each of those gets an
        `unmeasurable` event (once) instead of a measurement (see the module doc)."""
        why = getattr(self.executor, "cannot_measure", None)
        if why is None:
            return queue
        keep = []
        for c in queue:
            reason = why(c)
            if not reason:
                keep.append(c)
                continue
            self._step_unmeasurable += 1
            if c.id not in self.unmeasurable:
                self._emit(ev.Unmeasurable(candidate_id=c.id, reason=str(reason)))
        return keep
