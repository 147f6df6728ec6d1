"""benchmarks/search_ablation.py: its scoring and its guards (the real run is its committed result)."""
from __future__ import annotations

import pytest

from bench_scripts import load_bench

ablation = load_bench("search_ablation")


def _run(method, seed, best, trusted=0, curve=None):
    return {"problem_id": "P", "method": method, "seed": seed, "budget": 4, "gpu_measurements": 4,
            "best_speedup": best, "considered": 8, "trusted": trusted, "finish_reason": "budget spent",
            "curve": curve or [(4, best)]}


def test_summarise_scores_each_variant_against_measure_all_and_counts_trusted():
    runs = [_run("measure_all", 0, 2.0), _run("measure_all", 1, 1.0),
            _run("uncertainty_aware", 0, 2.0, trusted=3, curve=[(1, 1.5), (2, 2.0)]),
            _run("uncertainty_aware", 1, 0.9, trusted=1)]
    out = ablation.summarise(runs)
    ua = out["uncertainty_aware"]
    assert ua["trusted_mean"] == 2.0 and out["measure_all"]["trusted_mean"] == 0.0
    assert ua["win_or_tie_run_rate"] == 0.5  # seed 0 ties 2.0, seed 1 loses (0.9 < 1.0)
    # measure_all's median final best on P is 1.5: seed 0 reaches it at measurement 1, seed 1 never
    assert ua["budget_fraction_to_match_run_median"] is None  # half never match: an infinite median
    assert ua["match_rate"] == 0.5


def test_every_variant_is_a_known_method_with_valid_settings():
    from workbench.search.methods import make_method

    for name, (method, kw) in ablation.VARIANTS.items():
        assert make_method(method, k=2, m=3, **kw).name == method, name


def test_main_refuses_unknown_variants_and_a_missing_baseline():
    with pytest.raises(SystemExit, match="unknown variants"):
        ablation.main(["--variants", "measure_all;nope"])
    with pytest.raises(SystemExit, match="baseline"):
        ablation.main(["--variants", "screen_topk"])


def test_variant_names_with_commas_parse_and_the_default_is_every_variant():
    assert ablation.parse_variants(";".join(ablation.VARIANTS)) == list(ablation.VARIANTS)
    assert ablation.parse_variants("measure_all; ua:no_gain,rank=ei") == ["measure_all", "ua:no_gain,rank=ei"]
    with pytest.raises(SystemExit, match="unknown variants"):  # the comma form splits a name
        ablation.parse_variants("measure_all,ua:no_gain")
