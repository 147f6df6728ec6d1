"""Plot data functions agree with the metrics; renderers write real PNGs."""
from __future__ import annotations

import numpy as np
import pytest

from workbench.calibration import metrics, plots, selective


def _data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(8) * 0.5, n)
    y = np.array([rng.choice(8, p=row) for row in p])
    return p, y


def test_reliability_info_matches_metrics():
    p, y = _data()
    info = plots.reliability_info(p, y)
    assert sum(info["count"]) == len(y)
    assert info["ece"] == pytest.approx(metrics.ece(p, y))
    assert len(info["lower"]) == len(info["upper"]) == 10
    for c, a, k in zip(info["confidence"], info["accuracy"], info["count"]):
        assert (c is None) == (k == 0) and (a is None) == (k == 0)


def test_risk_coverage_info_per_score():
    p, y = _data()
    info = plots.risk_coverage_info(p, y)
    assert set(info["curves"]) == set(selective.SCORES)
    assert info["curves"]["maxprob"]["aurc"] == pytest.approx(selective.aurc(p, y))
    assert info["full_coverage_risk"] == pytest.approx(1 - metrics.accuracy(p, y))
    assert info["curves"]["margin"]["coverage"][-1] == pytest.approx(1.0)


def test_renderers_write_png(tmp_path):
    pytest.importorskip("matplotlib")
    p, y = _data()
    a = plots.save(plots.plot_reliability(plots.reliability_info(p, y)), tmp_path / "rel.png")
    b = plots.save(plots.plot_risk_coverage(plots.risk_coverage_info(p, y)), tmp_path / "rc.png")
    for path in (a, b):
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert path.stat().st_size > 5000
