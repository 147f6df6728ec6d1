"""Reward functions for GRPO training of a forecaster (TRL's reward-function interface).

Each reward is a plain function `f(completions, measured_bin, **columns) -> list[float | None]`:
`completions` are the model's answers (strings, or TRL's conversational form: a list of
messages whose last one holds the text), `measured_bin` the dataset column of true bin indices
0..7 (`workbench.bins.bin_of` of the measured speedup), one per completion. Other columns TRL
passes (prompts, trainer state, ...) are ignored. An answer is read with the forecaster's own
parser (`workbench.forecast.parsing.parse_answer`), so training rewards exactly what the
forecaster will later parse; an answer it cannot parse scores 0 under every reward.

Rewards (per completion, parsed answer with probabilities p and true bin y):
- format:      1 if the answer parses, else 0.
- correctness: 1 if argmax p (lowest index on ties) == y, else 0.
- brier:       correctness + (1 - Brier(p, y)), Brier = half the summed squared error against
               the one-hot truth, in [0, 1]; so the reward is in [0, 2].
- crps:        correctness + (1 - CRPS(p, y)), ordinal CRPS over the 7 inner edges / 7, in
               [0, 1]; so the reward is in [0, 2].
Brier and CRPS come from `workbench.calibration.metrics` (one definition in the project).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from workbench.calibration import metrics
from workbench.errors import ConfigError
from workbench.forecast.parsing import ParsedAnswer, parse_answer

RewardFunction = Callable[..., list]
#: Names accepted by `workbench train --reward`.
TRAINING_REWARDS = ("correctness", "brier", "crps")


def completion_text(completion: Any) -> str:
    """The answer text of one completion: a string, or the content of the last message of a
    conversational completion ([{"role": "assistant", "content": ...}])."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        return str(completion.get("content", ""))
    if isinstance(completion, (list, tuple)) and completion:
        return completion_text(completion[-1])
    return ""


def parse_completions(completions: Sequence[Any]) -> list[ParsedAnswer]:
    """Each completion read by the forecaster's text parser (never raises)."""
    return [parse_answer(text=completion_text(c)) for c in completions]


def _true_bins(measured_bin: Sequence[Any] | None, n: int) -> list[int]:
    if measured_bin is None:
        raise ConfigError("the reward needs the dataset column 'measured_bin' (true bin index 0..7)")
    y = [int(b) for b in measured_bin]
    if len(y) != n:
        raise ConfigError(f"{n} completions but {len(y)} measured bins: one bin per completion")
    return y


def _score(completions: Sequence[Any], measured_bin: Sequence[Any] | None,
           calibration: Callable[[np.ndarray, np.ndarray], float] | None) -> list[float]:
    y = _true_bins(measured_bin, len(completions))
    out = []
    for parsed, t in zip(parse_completions(completions), y):
        if not parsed.ok:
            out.append(0.0)
            continue
        p = np.asarray([parsed.probabilities], dtype=float)
        r = float(np.argmax(p[0]) == t)
        if calibration is not None:
            r += 1.0 - calibration(p, np.asarray([t]))
        out.append(r)
    return out


def format_reward(completions: Sequence[Any], **columns: Any) -> list[float]:
    """1.0 for an answer the forecaster's parser can read, 0.0 otherwise."""
    return [1.0 if p.ok else 0.0 for p in parse_completions(completions)]


def correctness_reward(completions: Sequence[Any], measured_bin: Sequence[Any] | None = None,
                       **columns: Any) -> list[float]:
    """1.0 when the most probable bin is the measured bin; 0.0 otherwise or when unparsed."""
    return _score(completions, measured_bin, None)


def brier_reward(completions: Sequence[Any], measured_bin: Sequence[Any] | None = None,
                 **columns: Any) -> list[float]:
    """correctness + (1 - Brier), in [0, 2]; 0.0 when unparsed."""
    return _score(completions, measured_bin, metrics.brier)


def crps_reward(completions: Sequence[Any], measured_bin: Sequence[Any] | None = None,
                **columns: Any) -> list[float]:
    """correctness + (1 - ordinal CRPS), in [0, 2]; 0.0 when unparsed."""
    return _score(completions, measured_bin, metrics.crps)


REWARDS: dict[str, RewardFunction] = {
    "format": format_reward,
    "correctness": correctness_reward,
    "brier": brier_reward,
    "crps": crps_reward,
}


def get_reward(name: str) -> RewardFunction:
    """The reward function called `name` (format, correctness, brier, crps)."""
    try:
        return REWARDS[name]
    except KeyError:
        raise ConfigError(f"unknown reward {name!r}; use one of {', '.join(REWARDS)}") from None


def constant_groups(rewards: Sequence[float], group_size: int, tol: float = 1e-9) -> list[bool]:
    """For rewards laid out as consecutive groups of `group_size` (one group per prompt, as
    GRPO generates them), whether each group's rewards are all equal (within `tol`).

    A constant group has zero advantage under GRPO and teaches nothing; the trainer drops it.
    NaN rewards (None from a reward function) are ignored; an all-NaN group is constant.
    """
    if group_size < 1 or len(rewards) % group_size:
        raise ConfigError(f"{len(rewards)} rewards do not split into groups of {group_size}")
    r = np.asarray(rewards, dtype=float).reshape(-1, group_size)
    out = []
    for row in r:
        vals = row[~np.isnan(row)]
        out.append(bool(vals.size == 0 or float(vals.max() - vals.min()) <= tol))
    return out
