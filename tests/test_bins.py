"""The one definition of the speedup bins, tested at every edge."""
from __future__ import annotations

import math

import pytest

from workbench import bins


def test_eight_bins_and_edges():
    assert bins.EDGES == (0.25, 0.5, 0.71, 1.0, 1.41, 2.0, 4.0)
    assert bins.N_BINS == 8
    assert len(bins.LABELS) == len(bins.MIDPOINTS) == 8


@pytest.mark.parametrize("i,edge", list(enumerate(bins.EDGES)))
def test_every_edge_is_closed_on_the_right(i, edge):
    # The edge itself belongs to the lower bin; anything just above it to the next one.
    assert bins.bin_of(edge) == i
    assert bins.bin_of(math.nextafter(edge, math.inf)) == i + 1
    assert bins.bin_of(math.nextafter(edge, 0.0)) == i


@pytest.mark.parametrize("s,expected_number", [
    (0.01, 1), (0.3, 2), (0.6, 3), (0.9, 4), (1.0, 4), (1.2, 5), (1.5, 6), (3.0, 7), (100.0, 8),
])
def test_bin_numbers(s, expected_number):
    assert bins.bin_number(s) == expected_number


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf")])
def test_bad_speedups_rejected(bad):
    with pytest.raises(ValueError):
        bins.bin_of(bad)


def test_midpoints_lie_inside_their_bins():
    for i, m in enumerate(bins.MIDPOINTS):
        assert bins.bin_of(m) == i


def test_labels_match_edges():
    assert bins.LABELS[0] == "<=0.25x"
    assert bins.LABELS[3] == "0.71-1x"
    assert bins.LABELS[-1] == ">4x"


def test_expected_log2_speedup():
    one_hot = [0.0] * 8
    one_hot[4] = 1.0
    assert bins.expected_log2_speedup(one_hot) == pytest.approx(math.log2(bins.MIDPOINTS[4]))
    # Unnormalised input is normalised.
    two = [0, 0, 0, 1, 1, 0, 0, 0]
    want = (bins.LOG2_MIDPOINTS[3] + bins.LOG2_MIDPOINTS[4]) / 2
    assert bins.expected_log2_speedup(two) == pytest.approx(want)
    with pytest.raises(ValueError):
        bins.expected_log2_speedup([1.0] * 7)


def test_table_is_numbered_from_one():
    lines = bins.table().splitlines()
    assert lines[0].startswith("1: ") and lines[-1].startswith("8: ")


@pytest.mark.parametrize("s, prompt, study", [
    (0.1, 0, 0), (0.25, 0, 0), (0.3, 1, 0), (1.0, 3, 3), (1.2, 4, 3), (1.41, 4, 3),
    (1.5, 5, 4), (2.0, 5, 5), (3.0, 6, 6), (4.0, 6, 7), (100.0, 7, 7),
])
def test_both_bin_conventions(s, prompt, study):
    # study code: floor(2 log2 S) + 4 clamped to 1..8, as an index 0..7
    assert bins.bin_of_convention(s, "prompt-table") == prompt == bins.bin_of(s)
    assert bins.bin_of_convention(s, "study-code") == study
    with pytest.raises(ValueError):
        bins.bin_of_convention(s, "other")
