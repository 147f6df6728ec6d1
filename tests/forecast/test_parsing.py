"""The answer parser on hand-written answers: structured, free text, and garbage."""
from __future__ import annotations

import json
import math

import pytest

from workbench.forecast.parsing import (FORECAST_SCHEMA, ParsedAnswer, parse_answer,
                                        parse_structured, parse_text)
from workbench.records import ParseStatus

GOOD = {"probabilities": {"1": 0.0, "2": 0.05, "3": 0.1, "4": 0.25, "5": 0.35, "6": 0.15,
                          "7": 0.1, "8": 0.0},
        "predicted_bin": 5, "reasoning": "Fewer passes over memory."}


def _valid(a: ParsedAnswer) -> None:
    assert a.ok, a.reason
    assert len(a.probabilities) == 8
    assert all(p >= 0 and math.isfinite(p) for p in a.probabilities)
    assert sum(a.probabilities) == pytest.approx(1.0)


# ----------------------------------------------------------------------------- structured
def test_structured_object_keyed_by_bin():
    a = parse_structured(json.dumps(GOOD))
    _valid(a)
    assert a.status is ParseStatus.OK
    assert a.probabilities[4] == pytest.approx(0.35)
    assert a.stated_bin == 4
    assert a.raw_sum == pytest.approx(1.0)
    assert a.reasoning == "Fewer passes over memory."


def test_structured_list_and_decoded_object():
    a = parse_structured({"probabilities": [0, 0, 0, 0.5, 0.5, 0, 0, 0], "predicted_bin": "4",
                          "reasoning": "x"})
    _valid(a)
    assert a.probabilities[3] == pytest.approx(0.5) and a.stated_bin == 3


def test_structured_sum_far_from_one_is_renormalised_and_raw_sum_kept():
    a = parse_structured({"probabilities": [0.4, 0.4, 0.4, 0.4, 0, 0, 0, 0.4]})
    _valid(a)
    assert a.raw_sum == pytest.approx(2.0)
    assert a.probabilities[0] == pytest.approx(0.2)
    assert any("renormalised" in n for n in a.notes)
    b = parse_structured({"probabilities": [0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1]})
    _valid(b)
    assert b.raw_sum == pytest.approx(0.8)


def test_structured_percentages():
    a = parse_structured({"probabilities": {"4": 40, "5": 50, "6": 10}})
    _valid(a)
    assert a.probabilities[4] == pytest.approx(0.5)
    assert a.raw_sum == pytest.approx(1.0)
    b = parse_structured({"probabilities": {"4": "40%", "5": "60%"}})
    _valid(b)
    assert b.probabilities[3] == pytest.approx(0.4)


def test_missing_bins_in_an_object_count_as_zero():
    a = parse_structured({"probabilities": {"bin_2": 0.25, "bin 3": 0.75}})
    _valid(a)
    assert a.probabilities[1] == pytest.approx(0.25) and a.probabilities[0] == 0


@pytest.mark.parametrize("answer, word", [
    ({"probabilities": [0.5, 0.5, 0, 0, 0, 0, 0]}, "got a list of 7"),
    ({"probabilities": [0.1] * 9}, "got a list of 9"),
    ({"probabilities": [0.5, -0.2, 0.7, 0, 0, 0, 0, 0]}, "negative"),
    ({"probabilities": [float("nan"), 0.2, 0.8, 0, 0, 0, 0, 0]}, "non-finite"),
    ({"probabilities": [0, 0, 0, 0, 0, 0, 0, 0]}, "zero"),
    ({"probabilities": {"9": 1.0}}, "unknown bin key"),
    ({"probabilities": {"0": 0.5, "1": 0.5}}, "unknown bin key"),
    ({"probabilities": "mostly bin 5"}, "list or an object"),
    ({"probabilities": [True, 0, 0, 0, 0, 0, 0, 0]}, "not a number"),
    ({"predicted_bin": 5, "reasoning": "no numbers"}, "no 'probabilities'"),
    ([0.1] * 8, "not an object"),
])
def test_structured_unusable(answer, word):
    a = parse_structured(json.dumps(answer) if not isinstance(answer, list) else answer)
    assert a.status is ParseStatus.ABSTAINED
    assert word in a.reason
    assert a.probabilities == ()


def test_structured_nan_literal_in_json_text():
    a = parse_structured('{"probabilities": [NaN, 0.2, 0.8, 0, 0, 0, 0, 0]}')
    assert not a.ok and "non-finite" in a.reason


def test_invalid_predicted_bin_is_noted_not_fatal():
    a = parse_structured({"probabilities": [0, 0, 0, 1, 0, 0, 0, 0], "predicted_bin": 12})
    _valid(a)
    assert a.stated_bin is None
    assert any("predicted_bin" in n for n in a.notes)
    b = parse_structured({"probabilities": [0, 0, 0, 1, 0, 0, 0, 0], "predicted_bin": 2})
    assert any("not the most probable" in n for n in b.notes)


def test_schema_lists_all_eight_bins():
    props = FORECAST_SCHEMA["properties"]["probabilities"]
    assert props["required"] == [str(i) for i in range(1, 9)]


# ----------------------------------------------------------------------------- free text
def test_text_with_fenced_json():
    text = "Here is my answer:\n```json\n" + json.dumps(GOOD) + "\n```\nThanks."
    a = parse_text(text)
    _valid(a)
    assert a.status is ParseStatus.FALLBACK
    assert a.stated_bin == 4


def test_text_skips_a_bad_json_object_and_uses_a_later_one():
    text = 'First {"note": 1} then {"probabilities": [0, 0, 1, 0, 0, 0, 0, 0]}'
    a = parse_text(text)
    _valid(a)
    assert a.probabilities[2] == 1.0


def test_text_list_of_eight_numbers():
    a = parse_text("My distribution is [0.0, 0.0, 0.1, 0.2, 0.4, 0.2, 0.1, 0.0]. predicted bin: 5")
    _valid(a)
    assert a.probabilities[4] == pytest.approx(0.4)
    assert a.stated_bin == 4


def test_text_bin_lines_and_percentages():
    text = """Analysis: the kernel is memory bound.
Bin 4: 20%
Bin 5 (1-1.41x): 50%
bin 6: 30%
Predicted bin: 5"""
    a = parse_text(text)
    _valid(a)
    assert a.probabilities[4] == pytest.approx(0.5)
    assert a.probabilities[0] == 0.0
    assert a.raw_sum == pytest.approx(1.0)
    assert a.stated_bin == 4


def test_text_does_not_read_the_echoed_bin_table_as_probabilities():
    table = "1: <=0.25x\n2: 0.25-0.5x\n3: 0.5-0.71x\n4: 0.71-1x\n5: 1-1.41x\n6: 1.41-2x\n7: 2-4x\n8: >4x"
    a = parse_text("The bins are:\n" + table + "\nI think it is fast.")
    assert a.status is ParseStatus.ABSTAINED
    b = parse_text("The bins are:\n" + table + "\n4: 0.3\n5: 0.7")
    _valid(b)
    assert b.probabilities[3] == pytest.approx(0.3) and b.probabilities[4] == pytest.approx(0.7)


def test_truncated_tool_arguments_are_rescued_by_the_fallback():
    args = '{"probabilities": {"1": 0.0, "2": 0.1, "3": 0.2, "4": 0.4, "5": 0.3, "6": 0, "7": 0, "8": 0}, "predicted_bin": 4, "reasoning": "The kernel re'
    a = parse_answer(tool_arguments=args)
    _valid(a)
    assert a.status is ParseStatus.FALLBACK
    assert a.probabilities[3] == pytest.approx(0.4)


def test_parse_answer_prefers_the_tool_call():
    text = "bin 1: 0.5, bin 2: 0.5"
    a = parse_answer(text=text, tool_arguments=json.dumps(GOOD))
    assert a.status is ParseStatus.OK and a.probabilities[4] == pytest.approx(0.35)
    b = parse_answer(text=text, tool_arguments="not json at all")
    assert b.status is ParseStatus.FALLBACK and b.probabilities[0] == pytest.approx(0.5)


@pytest.mark.parametrize("text", [
    "", "   ", "I am not sure.", "The speedup will be about 2x.",
    "{not json", "[0.1, 0.2, 0.3]", "bin 5: a lot", "\x00\x01\x02 \ufffd",
    "{" * 5000, "[" * 5000 + "]" * 5000, "Predicted bin: 5",
])
def test_garbage_gives_an_abstention_with_a_reason(text):
    a = parse_answer(text=text)
    assert a.status is ParseStatus.ABSTAINED
    assert a.reason
    f = a.to_forecast("t", "c", "p", "h100")
    assert f.abstained and "unparseable" in f.reasoning


@pytest.mark.parametrize("text, word", [
    ("bin 3: -0.2\nbin 4: 0.6\nbin 5: 0.6", "negative"),
    ("[0.1, 0.2, -0.3, 0.1, 0.1, 0.1, 0.1, 0.1]", "negative"),
    ('{"probabilities": [0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1]}', "list of 7"),
    ("bin 4: nan\nbin 5: 0.5", "non-finite"),
    ("bin 4: 0\nbin 5: 0", "zero"),
])
def test_bad_numbers_in_text(text, word):
    a = parse_text(text)
    assert not a.ok
    assert word in a.reason


def test_to_forecast_carries_cost_and_raw_sum():
    a = parse_structured({"probabilities": [0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2]})
    f = a.to_forecast("llm:x", "cid", "L1/01_softmax", "h100", relative_to="parent",
                      prompt_tokens=10, completion_tokens=3, seconds=0.5)
    assert f.raw_sum == pytest.approx(1.6)
    assert f.parse_status is ParseStatus.OK
    assert f.relative_to == "parent" and f.prompt_tokens == 10 and f.seconds == 0.5
    assert sum(f.probabilities) == pytest.approx(1.0)


def test_never_raises_on_odd_inputs():
    for bad in (None, 42, b"\xff\xfe", {"probabilities": {"1": {"nested": 1}}},
                {"probabilities": [None] * 8}, {"probabilities": [[1]] * 8}):
        a = parse_structured(bad)  # type: ignore[arg-type]
        assert a.status is ParseStatus.ABSTAINED
    assert parse_text(None).status is ParseStatus.ABSTAINED  # type: ignore[arg-type]
    assert parse_answer().status is ParseStatus.ABSTAINED


# ----------------------------------------------------------------------------- study format
#: An answer in the GPU Forecasters study's format, written by hand from its field list: one flat
#: probability field per named bin, a stated predicted_bin and reasoning.
STUDY_ANSWER = {"predicted_bin": 5,
                "p_severe_slowdown": 0.01, "p_significant_slowdown": 0.04,
                "p_moderate_slowdown": 0.05, "p_minor_slowdown": 0.30,
                "p_minor_speedup": 0.25, "p_significant_speedup": 0.20,
                "p_high_speedup": 0.10, "p_extreme_speedup": 0.05,
                "reasoning": "Fuses two passes; the reduction stays memory bound."}


def test_study_flat_fields_as_tool_arguments_and_as_json():
    for answer in (json.dumps(STUDY_ANSWER), STUDY_ANSWER):
        a = parse_structured(answer)
        _valid(a)
        assert a.status is ParseStatus.OK
        assert a.probabilities == pytest.approx((0.01, 0.04, 0.05, 0.30, 0.25, 0.20, 0.10, 0.05))
        assert a.stated_bin == 4  # stated bin 5, not the argmax (bin 4)
        assert max(range(8), key=a.probabilities.__getitem__) == 3
        assert a.reasoning.startswith("Fuses")
    t = parse_text("Answer:\n```json\n" + json.dumps(STUDY_ANSWER) + "\n```")
    _valid(t)
    assert t.stated_bin == 4


def test_study_tool_call_object_and_bin_names():
    call = {"name": "submit_kernel_runtime_estimate", "arguments": json.dumps(STUDY_ANSWER)}
    a = parse_structured(call)
    _valid(a)
    assert a.stated_bin == 4
    wrapped = parse_structured({"type": "function", "function": call})
    assert wrapped.probabilities == a.probabilities
    named = dict(STUDY_ANSWER, predicted_bin="significant_speedup")
    assert parse_structured(named).stated_bin == 5
    bare = {k.removeprefix("p_"): v for k, v in STUDY_ANSWER.items()}
    assert parse_structured(bare).probabilities == pytest.approx(a.probabilities)
    f = a.to_forecast("study", "c", "p", "a100")
    assert f.stated_bin == 4


# ----------------------------------------------------------------------------- strictness
@pytest.mark.parametrize("text", [
    "Step 1: 32 threads per block, step 2: 64 blocks.",
    "Timings: 1: 0.5 ms, 2: 0.25 ms, 3: 0.7 ms",
    "Stage 1: 40, stage 2: 60",
    "The grid is [1, 2, 3, 4, 5, 6, 7, 8] tiles wide.",
    "I expect about 2.5x, maybe bin 6 or 7.",
])
def test_prose_with_numbers_but_no_probabilities_abstains(text):
    a = parse_text(text)
    assert a.status is ParseStatus.ABSTAINED, a


@pytest.mark.parametrize("answer, word", [
    ({"probabilities": [1e308] * 8}, "non-finite"),
    ({"probabilities": {"4": "40%", "5": 0.6}}, "percentages and some are not"),
    ({"probabilities": [0.5, 2, 0, 0, 0, 0, 0, 0]}, "not probabilities"),
    ({"probabilities": [10, 20, 30, 40, 50, 60, 70, 80]}, "not probabilities"),
    ({"probabilities": ["0%"] * 8}, "zero"),
])
def test_non_finite_zero_and_mixed_unit_answers_abstain(answer, word):
    a = parse_structured(answer)
    assert a.status is ParseStatus.ABSTAINED
    assert word in a.reason


def test_percentages_are_read_the_same_way_on_every_path():
    expected = (0, 0, 0, 0.2, 0.5, 0.3, 0, 0)
    answers = [
        parse_structured({"probabilities": {"4": 20, "5": 50, "6": 30}}),
        parse_structured({"probabilities": {"4": "20%", "5": "50%", "6": "30%"}}),
        parse_structured({"p_minor_slowdown": 20, "p_minor_speedup": 50, "p_significant_speedup": 30}),
        parse_text("[0, 0, 0, 20, 50, 30, 0, 0]"),
        parse_text("bin 4: 20\nbin 5: 50\nbin 6: 30"),
        parse_text("4: 20%\n5: 50%\n6: 30%"),
    ]
    for a in answers:
        _valid(a)
        assert a.probabilities == pytest.approx(expected)
        assert a.raw_sum == pytest.approx(1.0)
