"""Training data for RL: forecast prompts with the measured answer, split by problem.

One example per ok measurement: the chat messages the forecaster would send for
(reference, candidate, hardware) (`workbench.forecast.prompts.PromptSet.messages`, the same
rendering `PromptedForecaster.messages` uses) plus the measured speedup and its bin as columns.
The split is by problem, as in `workbench.evaluate.crossval`: the problems are dealt into `folds`
groups by scikit-learn's GroupKFold (shuffled by `seed`) and fold `fold` is held out, so no
held-out problem is ever seen in training.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from workbench.errors import ConfigError
from workbench.forecast.prompts import PromptSet
from workbench.records import Candidate, Hardware, Measurement, Problem

Row = tuple[Problem, Candidate, Measurement]


def hardware_of(m: Measurement) -> Hardware:
    """The recorded hardware of a measurement (a bare record from its key when none was kept)."""
    return m.hardware or Hardware(key=m.hardware_key, name=m.hardware_key)


def load_rows(source: Any = None, gpu: str | None = "h100") -> list[Row]:
    """(problem, candidate, measurement) of every ok measurement with a speedup on `gpu`.

    `source` is any `workbench.dataset` data source (a Store, a shipped-layout directory, a
    RecordSet); None reads the shipped data in `kernels_cache/shipped/`. Rows are sorted by
    (problem, candidate) so a seed gives the same data everywhere.
    """
    from workbench.dataset import collect
    from workbench.dataset.shipped import DEFAULT_SHIPPED_DIR

    rs = collect(Path(DEFAULT_SHIPPED_DIR) if source is None else source, gpu)
    P = {p.id: p for p in rs.problems}
    C = {c.id: c for c in rs.candidates}
    rows = [(P[m.problem_id], C[m.candidate_id], m) for m in rs.measurements
            if m.ok and m.speedup and m.problem_id in P and m.candidate_id in C]
    if not rows:
        raise ConfigError(f"no ok measurements{f' on {gpu}' if gpu else ''} in the data source; "
                          "load data with `workbench dataset load-shipped` or pick another --gpu")
    rows.sort(key=lambda r: (r[0].id, r[1].id))
    return rows


def split_by_problem(rows: Sequence[Row], folds: int = 5, fold: int = 0, seed: int = 0
                     ) -> tuple[list[Row], list[Row]]:
    """(train rows, held-out rows): fold `fold` of a shuffled GroupKFold over problems is held out."""
    from sklearn.model_selection import GroupKFold

    groups = np.asarray([p.id for p, _, _ in rows])
    n_groups = len(set(groups.tolist()))
    if n_groups < 2 or folds < 2 or folds > n_groups:
        raise ConfigError(f"cannot split {n_groups} problems into {folds} folds; use 2 <= folds "
                          f"<= number of problems")
    if not 0 <= fold < folds:
        raise ConfigError(f"fold must be in 0..{folds - 1}, got {fold}")
    splitter = GroupKFold(n_splits=folds, shuffle=True, random_state=seed)
    _, test = list(splitter.split(np.zeros(len(rows)), groups=groups))[fold]
    held = set(groups[test].tolist())
    return ([r for r in rows if r[0].id not in held], [r for r in rows if r[0].id in held])


def sample_rows(rows: Sequence[Row], n: int | None, per_problem: int | None = None,
                seed: int = 0) -> list[Row]:
    """Up to `n` rows (None: all), at most `per_problem` from each problem, drawn with `seed`.

    Problems are visited in a seeded random order and each gives up to `per_problem` random
    rows, so a small sample still covers several problems (pools for top-k recovery).
    """
    rng = random.Random(seed)
    by_problem: dict[str, list[Row]] = {}
    for r in rows:
        by_problem.setdefault(r[0].id, []).append(r)
    order = sorted(by_problem)
    rng.shuffle(order)
    out: list[Row] = []
    for pid in order:
        pool = list(by_problem[pid])
        rng.shuffle(pool)
        out.extend(pool[:per_problem] if per_problem else pool)
    if n is not None and len(out) > n:
        out = out[:n] if per_problem else rng.sample(out, n)
    return out


@dataclass(frozen=True)
class Example:
    """One training prompt: chat messages plus the columns the rewards read."""

    prompt: list[dict[str, str]]
    measured_bin: int       # true bin index 0..7
    speedup: float          # measured reference_ms / candidate_ms
    problem_id: str
    candidate_id: str
    hardware_key: str

    def to_dict(self) -> dict[str, Any]:
        return {"prompt": self.prompt, "measured_bin": self.measured_bin, "speedup": self.speedup,
                "problem_id": self.problem_id, "candidate_id": self.candidate_id,
                "hardware_key": self.hardware_key}


def examples(rows: Sequence[Row], prompt: str | PromptSet = "default",
             max_source_chars: int = 12_000) -> list[Example]:
    """The forecaster's prompt for each row (reference-relative) with its measured bin."""
    ps = prompt if isinstance(prompt, PromptSet) else PromptSet.load(prompt)
    out = []
    for p, c, m in rows:
        msgs = ps.messages(p, c, hardware_of(m), max_source_chars=max_source_chars)
        out.append(Example(prompt=msgs, measured_bin=int(m.bin), speedup=float(m.speedup),
                           problem_id=p.id, candidate_id=c.id, hardware_key=m.hardware_key))
    return out


def to_dataset(items: Sequence[Example]):
    """A Hugging Face `datasets.Dataset` in TRL's conversational prompt format."""
    try:
        import datasets
    except ImportError as e:
        raise ConfigError("RL training needs `datasets` (and trl, peft): install the `llm` "
                          "and `dev` extras") from e
    if not items:
        raise ConfigError("no training examples: the split left no rows; lower --folds or "
                          "add data")
    return datasets.Dataset.from_list([e.to_dict() for e in items])
