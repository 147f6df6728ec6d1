"""Reliability and risk-coverage plots, split as pure `*_info` data functions + small renderers.

The `_info` functions return plain dicts of lists (JSON-friendly, used by the app and tests);
the renderers draw those dicts with matplotlib, imported only when a renderer is called.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

from workbench.calibration import metrics, selective
from workbench.errors import ConfigError


def reliability_info(probs, y, n_buckets: int = 10) -> dict[str, Any]:
    """Per confidence bucket: lower/upper edge, count, mean confidence, accuracy; plus ECE.

    Empty buckets have None for confidence and accuracy."""
    r = metrics.reliability(probs, y, n_buckets)

    def _clean(a):
        return [None if np.isnan(v) else float(v) for v in a]

    return {"lower": r.edges[:-1].tolist(), "upper": r.edges[1:].tolist(),
            "count": r.count.astype(int).tolist(), "confidence": _clean(r.confidence),
            "accuracy": _clean(r.accuracy), "ece": r.ece, "n": int(len(y))}


def risk_coverage_info(probs, y, scores: tuple[str, ...] = selective.SCORES,
                       loss: selective.Loss = "bin") -> dict[str, Any]:
    """Risk-coverage curve and AURC per confidence score, plus the full-coverage risk."""
    err = selective.losses(probs, y, loss)
    curves = {}
    for s in scores:
        rc = selective.risk_coverage(selective.confidence(probs, s), err)
        curves[s] = {"coverage": rc.coverage.tolist(), "risk": rc.risk.tolist(),
                     "thresholds": rc.thresholds.tolist(), "aurc": rc.aurc}
    return {"curves": curves, "full_coverage_risk": float(np.mean(err)) if len(err) else None,
            "loss": loss if isinstance(loss, str) else getattr(loss, "__name__", "custom")}


def _pyplot():
    try:
        import matplotlib
        # Headless by default (CLI, app, tests), but a backend already chosen is kept: Jupyter's
        # inline backend (ipykernel sets MPLBACKEND) or one pyplot was imported with.
        if "matplotlib.pyplot" not in sys.modules and not os.environ.get("MPLBACKEND"):
            matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ConfigError("plotting needs matplotlib; install it with "
                          "`.venv/bin/pip install matplotlib`") from e
    return plt


def plot_reliability(info: dict[str, Any], ax=None, title: str = "Reliability"):
    """Bar chart of accuracy per confidence bucket against the diagonal; returns the Axes."""
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(4.5, 4.5))
    lower, upper = np.asarray(info["lower"]), np.asarray(info["upper"])
    acc = np.asarray([np.nan if a is None else a for a in info["accuracy"]], dtype=float)
    ax.bar(lower, np.nan_to_num(acc), width=upper - lower, align="edge", edgecolor="black",
           alpha=0.7, label="accuracy")
    ax.plot([0, 1], [0, 1], "--", color="grey", label="perfect calibration")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("confidence (max probability)")
    ax.set_ylabel("accuracy")
    ax.set_title(f"{title} (ECE {info['ece']:.3f}, n={info['n']})")
    ax.legend(loc="upper left")
    return ax


def plot_risk_coverage(info: dict[str, Any], ax=None, title: str = "Risk-coverage"):
    """One line per confidence score: selective risk against coverage; returns the Axes."""
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 4))
    for name, c in info["curves"].items():
        ax.step(c["coverage"], c["risk"], where="post", label=f"{name} (AURC {c['aurc']:.3f})")
    if info.get("full_coverage_risk") is not None:
        ax.axhline(info["full_coverage_risk"], color="grey", ls=":", label="no deferral")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("coverage (share trusted)")
    ax.set_ylabel(f"selective risk ({info['loss']})")
    ax.set_title(title)
    ax.legend(loc="upper left")
    return ax


def save(ax, path: str | Path) -> Path:
    """Write the Axes' figure to `path` (PNG by extension) and close it."""
    plt = _pyplot()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig = ax.figure
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
