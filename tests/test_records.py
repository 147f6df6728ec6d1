"""Records: ids, round trips, invariants."""
from __future__ import annotations

import pytest

from workbench.records import (Candidate, Forecast, Hardware, Measurement, ParseStatus, Status,
                               candidate_id, normalise_source)


def test_candidate_id_ignores_comments_and_spacing():
    a = "import torch\n\nclass ModelNew:  # a comment\n    pass\n"
    b = "import torch\nclass ModelNew:\n    pass   \n\n# trailing note\n"
    c = "import torch\nclass ModelNew:\n    x = 1\n"
    assert candidate_id(a) == candidate_id(b)
    assert candidate_id(a) != candidate_id(c)


TRICKY = [
    "import torch\n\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        if x:\n"
    "            y = (x +\n                 1)\n        return  x  *  2\n",
    "x = '''a\n   b  \n\n'''\ndef f(a,\n      b):\n  return a\ny = f(1,\n 2)",  # no final newline
    "def f():\n    return {\n'k': [1,\n      2],\n    }\nclass A:\n    pass\n\n\nz = 'é' + \"x\"\n",
    "def broken(:\n    pass\n",  # not Python: the same text either way
    "x = (1,\n",  # an unclosed bracket: a line-wise strip
    "if x:\n  y = 1\n   z = 2\n",  # an indentation error: a line-wise strip
]


def test_sources_without_comments_or_continuations_skip_the_tokenizer_with_the_same_text():
    """normalise_source's short cut (no `#`, backslash, tab, form feed or carriage return) gives
    the tokenizer's text, so a candidate's id does not depend on which path computed it."""
    from workbench.dataset.shipped import DEFAULT_SHIPPED_DIR, load_shipped
    from workbench.families import FAMILIES
    from workbench.records import _RETOKENIZED, _normalise_tokenized

    sources = list(TRICKY)
    for fam in list(FAMILIES.values())[:12]:
        sources += [fam.render(pt) for pt in fam.points()[:10]]
    if (DEFAULT_SHIPPED_DIR / "kernels.parquet").exists():
        _, candidates, _ = load_shipped(DEFAULT_SHIPPED_DIR)
        sources += [c.source for c in candidates[:400]]
        for c in candidates[:400]:  # the shipped ids are what either path computes
            assert candidate_id(c.source) == c.id, c.id
    plain = [s for s in sources if _RETOKENIZED.search(s) is None]
    assert len(plain) >= 100 and all(s in plain for s in TRICKY)
    for s in plain:
        assert normalise_source(s) == _normalise_tokenized(s), s[:200]
    # A comment or a backslash continuation goes through the tokenizer.
    assert normalise_source("x = 1  # c\ny = 2 \\\n  + 3\n") == _normalise_tokenized("x = 1  # c\ny = 2 \\\n  + 3\n")
    assert "# c" not in normalise_source("x = 1  # c\n")


def test_candidate_round_trip_and_backend():
    c = Candidate.from_source("L1/01_softmax", "import triton\nclass ModelNew: pass\n",
                              parent_id="abc", generation=2, origin="mutation:num_warps")
    assert c.backend == "triton"
    assert Candidate.from_dict(c.to_dict()) == c
    assert Candidate.from_source("p", "from torch.utils.cpp_extension import load_inline").backend == "cuda"


def test_measurement_status_and_bin():
    m = Measurement(candidate_id="c", problem_id="p", hardware_key="h100", status="ok",
                    reference_ms=2.0, candidate_ms=1.0, speedup=2.0)
    assert m.status is Status.OK and m.bin == 5
    assert Measurement.from_dict(m.to_dict()) == m
    bad = Measurement(candidate_id="c", problem_id="p", hardware_key="h100",
                      status=Status.COMPILE_ERROR)
    assert bad.bin is None and bad.status.is_failure


def test_forecast_renormalises_and_keeps_raw_sum():
    f = Forecast(forecaster="x", candidate_id="c", problem_id="p", hardware_key="h100",
                 probabilities=(0, 0, 0, 1, 3, 0, 0, 0), raw_sum=4.0)
    assert sum(f.probabilities) == pytest.approx(1.0)
    assert f.predicted_bin == 4 and f.confidence == pytest.approx(0.75)
    assert f.raw_sum == 4.0
    assert Forecast.from_dict(f.to_dict()) == f


def test_forecast_rejects_bad_distributions():
    with pytest.raises(ValueError):
        Forecast(forecaster="x", candidate_id="c", problem_id="p", hardware_key="h",
                 probabilities=(1.0,) * 7)
    with pytest.raises(ValueError):
        Forecast(forecaster="x", candidate_id="c", problem_id="p", hardware_key="h",
                 probabilities=(-1.0,) + (1.0,) * 7)


def test_abstention_is_uniform_and_flagged():
    f = Forecast.abstention("llm", "c", "p", "h100", reason="no JSON found")
    assert f.abstained and f.parse_status is ParseStatus.ABSTAINED
    assert max(f.probabilities) == pytest.approx(1 / 8)


def test_hardware_fingerprint_ignores_clocks():
    h1 = Hardware(key="h100", name="NVIDIA H100", sm_count=132, sm_clock_mhz=1980)
    h2 = h1.replace(sm_clock_mhz=345)
    h3 = h1.replace(driver="999")
    assert h1.fingerprint == h2.fingerprint != h3.fingerprint
