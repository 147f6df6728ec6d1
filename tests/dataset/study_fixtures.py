"""Rows in the schemas of the GPU Forecasters study datasets, for the importer tests.

Column names follow the Hugging Face dataset cards of `codezakh/gpu-forecasters-<kind>`. The
stored labels use the study's own label formula, floor(2*log2(S)) + 4 clipped to 1..8, which is
NOT the workbench's bin table, so the importers' recomputation of bins is visible in the tests.
"""
from __future__ import annotations

import json
import math

import pyarrow as pa
import pyarrow.parquet as pq

A100 = "NVIDIA A100-SXM4-80GB"
L40S = "NVIDIA L40S"


def study_label(speedup: float) -> int:
    """The study's stored label formula (one bin lower than the prompt table for most speedups)."""
    return min(8, max(1, math.floor(2 * math.log2(speedup)) + 4))


# --------------------------------------------------------------------------- study rows
def eval_rows() -> list[dict]:
    """Eval-set rows: 2 packs, 2 GPUs, a NaN speedup, a candidate reused under another anchor."""
    rows = []
    specs = [("cmp-1", "softmax", "ANCHOR_SOFTMAX = 1\n", "k = 1\n", A100, 1.0),
             ("cmp-2", "softmax", "ANCHOR_SOFTMAX = 1\n", "k = 2\n", A100, 1.5),
             ("cmp-3", "softmax", "ANCHOR_SOFTMAX = 1\n", "k = 3\n", L40S, 0.3),
             ("cmp-4", "matmul", "ANCHOR_MATMUL = 1\n", "m = 1\n", A100, 4.0),
             ("cmp-5", "matmul", "ANCHOR_MATMUL = 1\n", "m = 2\n", A100, float("nan")),
             ("cmp-6", "matmul", "ANCHOR_MATMUL = 1\n", "k = 1\n", A100, 2.5)]  # k = 1 again
    for cid, pack, anchor, cand, hw, s in specs:
        rows.append({"source_search": "puct-run-7", "internal_experiment": "exp-a",
                     "comparison_id": cid, "pack": pack, "anchor_code": anchor,
                     "candidate_code": cand, "hardware": hw, "aggregated_speedup": s,
                     "true_bin": study_label(s) if math.isfinite(s) else 1, "source_id": f"src-{cid}"})
    return rows


def prediction_rows() -> list[dict]:
    def probs(values):
        return [{"bin": i + 1, "p": p} for i, p in enumerate(values)]

    base = {"pack": "softmax", "reasoning": "bandwidth bound", "parse_error": None,
            "input_tokens": 1200, "output_tokens": 80, "elapsed_s": 2.5}
    return [
        {**base, "comparison_id": "cmp-2", "surrogate_label": "gemini3_flash", "repeat": 0,
         "predicted_bin": 6, "bin_probabilities": probs([0, 0, 0, 0.1, 0.2, 0.45, 0.15, 0]),
         "raw_probability_sum": 0.9, "parse_failed": False},
        {**base, "comparison_id": "cmp-2", "surrogate_label": "gemini3_flash", "repeat": 1,
         "predicted_bin": 5, "bin_probabilities": probs([0, 0, 0, 0.2, 0.5, 0.3, 0, 0]),
         "raw_probability_sum": 1.0, "parse_failed": False},
        {**base, "comparison_id": "cmp-1", "surrogate_label": "gemini3_flash", "repeat": 0,
         "predicted_bin": None, "bin_probabilities": [], "raw_probability_sum": None,
         "parse_failed": True, "parse_error": "no tool call"},
        {**base, "comparison_id": "cmp-404", "surrogate_label": "gemini3_flash", "repeat": 0,
         "predicted_bin": 4, "bin_probabilities": probs([0.125] * 8),
         "raw_probability_sum": 1.0, "parse_failed": False},
    ]


def rl_rows() -> list[dict]:
    rows = []
    for i, (pair_type, cand, s) in enumerate([("seed", "r = 1\n", 0.8), ("parent_edit", "r = 2\n", 1.41),
                                               ("pair", "r = 3\n", 1.42)]):
        rows.append({"row_id": f"rl-{i}", "pack": "trimul", "anchor_code": "TRIMUL = 1\n",
                     "candidate_code": cand, "aggregated_speedup": s, "relative_bin": study_label(s),
                     "pair_type": pair_type, "hardware": A100, "source_id": f"s{i}",
                     "source_search": "puct", "internal_experiment": "exp-b"})
    return rows


def discovery_rows() -> list[dict]:
    """A lineage chain grandparent -> parent -> child, on KernelBench L3 and GPU Mode families."""
    chain = [("pair-1", "vgg19", "kernelbench_l3", "G = 1\n", "P = 1\n", 1.3, "n0", "n1"),
             ("pair-2", "vgg19", "kernelbench_l3", "P = 1\n", "C = 1\n", 2.2, "n1", "n2"),
             ("pair-3", "fp8_quant", "gpu_mode", "Q = 1\n", "Q = 2\n", 0.6, "q0", "q1")]
    return [{"pair_id": pid, "problem_id": prob, "benchmark_family": fam, "parent_code": parent,
             "child_code": child, "g_speedup": s, "true_bin": study_label(s), "hardware": A100,
             "parent_node_id": pn, "child_node_id": cn, "source_id": pid, "source_search": "puct",
             "internal_experiment": "exp-c"}
            for pid, prob, fam, parent, child, s, pn, cn in chain]


def write_parquet(rows: list[dict], path) -> str:
    pq.write_table(pa.Table.from_pylist(rows), path)
    return str(path)


def write_jsonl(rows: list[dict], path) -> str:
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    return str(path)
