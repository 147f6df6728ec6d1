"""Reward functions on hand-computed cases (no model needed).

Bins are indices 0..7 here (bin number - 1). Brier = half the summed squared error against the
one-hot truth; ordinal CRPS = sum over the 7 inner edges of (F(k) - 1[y <= k])^2, divided by 7.
"""
from __future__ import annotations

import json
import math

import pytest

from workbench.errors import ConfigError
from workbench.rl.rewards import (REWARDS, brier_reward, completion_text, constant_groups,
                                  correctness_reward, crps_reward, format_reward, get_reward)


def answer(probs: list[float], predicted: int | None = None) -> str:
    obj = {"probabilities": {str(i + 1): p for i, p in enumerate(probs)},
           "predicted_bin": predicted or (probs.index(max(probs)) + 1), "reasoning": "r"}
    return json.dumps(obj)


HALF_4_5 = answer([0, 0, 0, 0.5, 0.5, 0, 0, 0])      # ties: argmax is the lower bin (index 3)
ONE_HOT_1 = answer([1, 0, 0, 0, 0, 0, 0, 0])
UNIFORM = answer([0.125] * 8)
GARBAGE = "I think the candidate is quite fast."


def test_two_bin_split_scored_by_hand():
    # y = 3: argmax (lowest index on ties) = 3 -> correct.
    # Brier = 0.5 * (0.5^2 + 0.5^2) = 0.25.
    # CDF at k=0..6 = 0,0,0,.5,1,1,1; truth step = 0,0,0,1,1,1,1; only k=3 differs: 0.25 / 7.
    assert correctness_reward([HALF_4_5], measured_bin=[3]) == [1.0]
    assert brier_reward([HALF_4_5], measured_bin=[3]) == [pytest.approx(1.75)]
    assert crps_reward([HALF_4_5], measured_bin=[3]) == [pytest.approx(2 - 0.25 / 7)]
    # y = 4: the other half. Argmax is 3 -> wrong; Brier the same; CDF gap at k=3 is 0.5^2.
    assert correctness_reward([HALF_4_5], measured_bin=[4]) == [0.0]
    assert brier_reward([HALF_4_5], measured_bin=[4]) == [pytest.approx(0.75)]
    assert crps_reward([HALF_4_5], measured_bin=[4]) == [pytest.approx(1 - 0.25 / 7)]


def test_confident_and_maximally_wrong_scores_zero():
    # All mass on index 0, truth 7: Brier = 0.5 * (1 + 1) = 1; CDF = 1 everywhere, step = 0
    # everywhere -> CRPS = 7 / 7 = 1. Every reward is 0, the same as an unparsed answer.
    assert brier_reward([ONE_HOT_1], measured_bin=[7]) == [0.0]
    assert crps_reward([ONE_HOT_1], measured_bin=[7]) == [pytest.approx(0.0)]
    # ... and confident and right scores the maximum 2.
    assert brier_reward([ONE_HOT_1], measured_bin=[0]) == [2.0]
    assert crps_reward([ONE_HOT_1], measured_bin=[0]) == [2.0]


def test_uniform_answer_by_hand():
    # y = 2. Brier = 0.5 * ((7/8)^2 + 7 * (1/8)^2) = 0.4375.
    # CDF = 1/8 .. 7/8; gaps^2 = 1,4,25,16,9,4,1 (/64) -> 60/64, / 7.
    assert correctness_reward([UNIFORM], measured_bin=[2]) == [0.0]
    assert brier_reward([UNIFORM], measured_bin=[2]) == [pytest.approx(1 - 0.4375)]
    assert crps_reward([UNIFORM], measured_bin=[2]) == [pytest.approx(1 - 60 / 64 / 7)]


def test_parse_failure_scores_zero_everywhere():
    for name, f in REWARDS.items():
        assert f([GARBAGE, ""], measured_bin=[3, 3]) == [0.0, 0.0], name
    assert format_reward([HALF_4_5, GARBAGE]) == [1.0, 0.0]


def test_free_text_answers_go_through_the_forecasters_fallback_parser():
    text = "Bin 4: 50%\nbin 5: 50%\npredicted_bin: 4"
    assert format_reward([text]) == [1.0]
    assert brier_reward([text], measured_bin=[3]) == [pytest.approx(1.75)]


def test_conversational_completions_and_extra_columns():
    conv = [{"role": "assistant", "content": HALF_4_5}]
    assert completion_text(conv) == HALF_4_5
    got = brier_reward([conv, [{"role": "assistant", "content": GARBAGE}]], measured_bin=[3, 3],
                       prompts=["p", "p"], speedup=[1.2, 1.2], trainer_state=None)
    assert got == [pytest.approx(1.75), 0.0]


def test_batch_is_scored_row_by_row():
    got = crps_reward([HALF_4_5, ONE_HOT_1, UNIFORM], measured_bin=[3, 0, 2])
    assert got == [pytest.approx(2 - 0.25 / 7), pytest.approx(2.0), pytest.approx(1 - 60 / 448)]


def test_missing_or_misaligned_bins_are_config_errors():
    with pytest.raises(ConfigError, match="measured_bin"):
        brier_reward([HALF_4_5])
    with pytest.raises(ConfigError, match="one bin per completion"):
        crps_reward([HALF_4_5, UNIFORM], measured_bin=[3])
    with pytest.raises(ConfigError, match="unknown reward"):
        get_reward("accuracy")


def test_constant_groups():
    assert constant_groups([1, 1, 0, 2], 2) == [True, False]
    assert constant_groups([0.5, 0.5, 0.5, 0.5000001], 4) == [False]
    assert constant_groups([math.nan, 1.0, 1.0, math.nan, math.nan, math.nan], 3) == [True, True]
    with pytest.raises(ConfigError):
        constant_groups([1, 2, 3], 2)


def test_no_reward_raises_on_any_parsed_answer():
    """Odd answers (huge, tiny, mixed units, the study's format, percentages, garbage) parse to
    an answer or an abstention, and every reward scores them without raising."""
    import json as _json

    from workbench.rl.rewards import REWARDS

    answers = [
        _json.dumps({"probabilities": [1e308] * 8}),
        _json.dumps({"probabilities": [1e-320, 0, 0, 0, 0, 0, 0, 0]}),
        _json.dumps({"probabilities": ["1e-300%", 0, 0, 0, 0, 0, 0, 0]}),
        _json.dumps({"probabilities": {"4": "40%", "5": 0.6}}),
        _json.dumps({"p_minor_speedup": 0.7, "p_high_speedup": 0.3, "predicted_bin": "minor_speedup"}),
        "bin 4: 20\nbin 5: 50\nbin 6: 30",
        "[0, 0, 0, 0, 0, 0, 0, 1e999]",
        "Stage 1: 40, stage 2: 60",
        "bin 5: 1e-310%\nbin 6: 0",
        "",
    ]
    for name, reward in REWARDS.items():
        out = reward(answers, measured_bin=[4] * len(answers))
        assert len(out) == len(answers), name
        assert all(r is None or (0.0 <= r <= 2.0) for r in out), (name, out)
