"""The held-out protocol: a problem list fixed in a committed file before measurement, no fitting
or variant choice on held-out problems, variant choice by inner cross-validation on the
training problems, headline numbers on the held-out problems.

`load_protocol()` reads `workbench/data/heldout_landscapes.toml`. Scripts call
`Protocol.check_fit(problem_ids, what)` on every set of problems whose data fits a model or
decides a choice (it raises `HeldOutLeakError` naming the leaked problems), filter data with
`Protocol.training_only`, and choose variants with `inner_cv_choose`, which refuses held-out
problems and returns what it chose and why.
"""
from __future__ import annotations

import hashlib
import random
import statistics
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from workbench.errors import WorkbenchError

DEFAULT_PROTOCOL = Path(__file__).resolve().parents[1] / "data" / "heldout_landscapes.toml"
MIN_HELDOUT = 8


class HeldOutLeakError(WorkbenchError):
    """Held-out problems would be used for fitting or for a choice."""


class ProtocolError(WorkbenchError):
    """The protocol file is missing or malformed."""


@dataclass(frozen=True)
class Protocol:
    training: tuple[str, ...]
    heldout: tuple[str, ...]
    tie_rel: float
    path: str
    sha256: str  # of the file's bytes: results name the protocol they followed

    @property
    def problems(self) -> tuple[str, ...]:
        return self.training + self.heldout

    def is_heldout(self, problem_id: str) -> bool:
        return problem_id in self.heldout

    def check_fit(self, problem_ids: Iterable[str], what: str) -> None:
        """Raise HeldOutLeakError when any of `problem_ids` is held out; `what` names the use
        ("fitting the learned forecaster", "choosing a variant", ...)."""
        leaked = sorted(set(problem_ids) & set(self.heldout))
        if leaked:
            raise HeldOutLeakError(
                f"{what} would use {len(leaked)} held-out problem(s) ({', '.join(leaked[:4])}"
                f"{', ...' if len(leaked) > 4 else ''}); the protocol ({self.path}) keeps them out of every fit "
                "and choice: drop their rows first (Protocol.training_only) and score them only at the end")

    def training_only(self, records):
        """A RecordSet (or anything with problems/candidates/measurements) without held-out rows."""
        from workbench.dataset.sources import RecordSet, collect

        rs = collect(records)
        held = set(self.heldout)
        return RecordSet([p for p in rs.problems if p.id not in held],
                         [c for c in rs.candidates if c.problem_id not in held],
                         [m for m in rs.measurements if m.problem_id not in held])

    def describe(self) -> dict[str, Any]:
        """What a result records of the protocol: its file (relative to the checkout when it is
        the checkout's, so results name no machine's folders), hash, problems and tie rule."""
        return {"file": _shown(self.path), "sha256": self.sha256, "training": list(self.training),
                "heldout": list(self.heldout), "tie_rel": self.tie_rel}


def _shown(path: str) -> str:
    root = Path(__file__).resolve().parents[2]
    try:
        return Path(path).resolve().relative_to(root).as_posix()
    except ValueError:
        return path


def load_protocol(path: str | Path | None = None) -> Protocol:
    p = Path(path) if path is not None else DEFAULT_PROTOCOL
    try:
        raw = p.read_bytes()
        data = tomllib.loads(raw.decode())
    except FileNotFoundError as e:
        raise ProtocolError(f"{p}: no protocol file; the held-out list must be committed before measuring") from e
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ProtocolError(f"{p}: not valid TOML: {e}") from e
    training, heldout = data.get("training"), data.get("heldout")
    if not isinstance(training, list) or not isinstance(heldout, list) or not all(
            isinstance(x, str) for x in training + heldout):
        raise ProtocolError(f"{p}: needs `training` and `heldout` lists of problem ids")
    if set(training) & set(heldout):
        raise ProtocolError(f"{p}: {sorted(set(training) & set(heldout))} are both training and held out")
    if len(set(heldout)) < MIN_HELDOUT:
        raise ProtocolError(f"{p}: {len(set(heldout))} held-out problems; the protocol needs at least {MIN_HELDOUT}")
    return Protocol(tuple(training), tuple(heldout), float(data.get("tie_rel", 0.02)), str(p),
                    hashlib.sha256(raw).hexdigest()[:16])


@dataclass(frozen=True)
class Choice:
    """What `inner_cv_choose` chose, with the evidence: each variant's mean and per-fold scores
    on the inner validation folds, the folds themselves and a one-line reason."""

    chosen: str
    mean_scores: dict[str, float]
    fold_scores: dict[str, list[float]]
    folds: list[list[str]]
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"chosen": self.chosen, "mean_scores": self.mean_scores, "fold_scores": self.fold_scores,
                "folds": self.folds, "reason": self.reason}


def cv_folds(problems: Sequence[str], folds: int = 5, seed: int = 0) -> list[list[str]]:
    """The problem folds `inner_cv_choose` uses: the sorted ids shuffled by `seed`, dealt round
    robin into `folds` groups (shared by scripts that fit once per fold for several uses)."""
    ids = sorted(set(problems))
    if len(ids) < folds or folds < 2:
        raise ProtocolError(f"{len(ids)} training problems for {folds} folds; need folds >= 2 and a problem per fold")
    random.Random(seed).shuffle(ids)
    return [ids[i::folds] for i in range(folds)]


def inner_cv_choose(variants: Mapping[str, Any], problems: Sequence[str],
                    score: Callable[[Any, list[str], list[str]], float], protocol: Protocol,
                    folds: int = 5, seed: int = 0, higher_is_better: bool = True) -> Choice:
    """Choose among `variants` (name -> variant) by `folds`-fold cross-validation over
    `problems` (training problems only: HeldOutLeakError otherwise). `score(variant, train,
    validation)` fits on the train problem ids and scores on the validation ones. Ties go to the
    variant listed first. Problems are shuffled into folds by `seed`."""
    if not variants:
        raise ProtocolError("inner_cv_choose needs at least one variant")
    protocol.check_fit(problems, "choosing a variant by inner cross-validation")
    parts = cv_folds(problems, folds, seed)
    ids = sorted(set(problems))
    fold_scores: dict[str, list[float]] = {}
    for name, variant in variants.items():
        fold_scores[name] = []
        for i, val in enumerate(parts):
            train = [x for j, p in enumerate(parts) if j != i for x in p]
            fold_scores[name].append(float(score(variant, train, list(val))))
    means = {n: statistics.fmean(v) for n, v in fold_scores.items()}
    sign = 1 if higher_is_better else -1
    chosen = max(means, key=lambda n: (sign * means[n], -list(variants).index(n)))
    others = ", ".join(f"{n} {means[n]:.4g}" for n in means if n != chosen)
    reason = (f"{chosen} has the {'highest' if higher_is_better else 'lowest'} mean inner-CV score "
              f"{means[chosen]:.4g} over {folds} folds of {len(ids)} training problems"
              + (f" (others: {others})" if others else ""))
    return Choice(chosen, means, fold_scores, [sorted(p) for p in parts], reason)


def guard_forecaster(forecaster: Any, protocol: Protocol, what: str = "fitting a forecaster") -> Any:
    """`forecaster` with its `fit` replaced by one that first refuses measurements of held-out
    problems (HeldOutLeakError, before any fitting). Scripts fit through it, so a leak fails
    loudly instead of silently inflating a held-out score. Returns the same object (unchanged
    when it has no `fit`: nothing to guard)."""
    fit = getattr(forecaster, "fit", None)
    if not callable(fit):
        return forecaster

    def guarded_fit(problems, candidates, measurements, *args: Any, **kwargs: Any):
        ms = list(measurements)
        protocol.check_fit({m.problem_id for m in ms}, what)
        return fit(problems, candidates, ms, *args, **kwargs)

    forecaster.fit = guarded_fit
    return forecaster


def guarded_factory(factory: Callable[[], Any], protocol: Protocol, what: str = "fitting a forecaster"
                    ) -> Callable[[], Any]:
    """A maker of `guard_forecaster`-wrapped forecasters from `factory()`."""
    return lambda: guard_forecaster(factory(), protocol, what)
