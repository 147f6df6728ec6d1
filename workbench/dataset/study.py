"""Importers for the public datasets of the GPU Forecasters study (Khan et al., arXiv 2605.31464).

Kinds and the columns they need (names as on the Hugging Face dataset cards of
`codezakh/gpu-forecasters-<kind>`):

- `eval-set`: comparison_id, pack, anchor_code, candidate_code, hardware, aggregated_speedup,
  true_bin (+ source_id, source_search, internal_experiment kept as provenance)
- `rl-training-pool`: row_id, pack, anchor_code, candidate_code, hardware, aggregated_speedup,
  relative_bin, pair_type
- `discovery-pairs`: pair_id, problem_id, benchmark_family, parent_code, child_code, hardware,
  g_speedup, true_bin
- `eval-set-predictions`: comparison_id, surrogate_label, repeat, bin_probabilities (list of
  {bin: 1..8, p}), reasoning, raw_probability_sum, parse_failed, parse_error, input_tokens,
  output_tokens, elapsed_s; joined to the eval set on comparison_id.

Mapping: the "anchor" kernel of a row (the reference, or the parent for discovery pairs) becomes a
`Problem` whose id is `study/<pack>/<hash of the anchor>`, so every imported speedup keeps its
meaning "over this problem's reference". The candidate becomes a `Candidate` and the row's speedup
a `Measurement` on the hardware named in the row. The study's stored bin labels are NOT used:
bins are recomputed from the speedup with `workbench.bins`; disagreements are only counted
(the study computed its labels with a different formula than the table its prompts show). The
count is against one label convention (`bins.CONVENTIONS`): "prompt-table" (default: the table
the study's prompts show, `bins.EDGES`) or "study-code" (floor(2 log2 S) + 4 clamped to 1..8, the
formula its stored labels came from); the result names the convention it used.
Dates are not in the study data, so `created_at` and `measured_at` are left empty.
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import pyarrow.parquet as pq

from workbench import bins
from workbench.dataset.errors import DatasetError
from workbench.dataset.sources import RecordSet
from workbench.records import Candidate, Forecast, Hardware, Measurement, ParseStatus, Problem, Status

KINDS = ("eval-set", "rl-training-pool", "discovery-pairs", "eval-set-predictions")
HUB_PREFIX = "codezakh/gpu-forecasters-"
# (config, split) pairs to read from the Hub for each kind.
HUB_CONFIGS: dict[str, tuple[tuple[str, str], ...]] = {
    "eval-set": (("combined", "eval"),),
    "rl-training-pool": (("combined", "train"),),
    "discovery-pairs": (("gpu_mode", "pairs"), ("kernelbench_l3", "pairs")),
    "eval-set-predictions": (("combined", "predictions"),),
}


@dataclass(frozen=True)
class _PairColumns:
    """Which columns of a pair-kind row hold what."""

    row_id: str
    group: str
    anchor: str
    candidate: str
    speedup: str
    label: str
    extra: tuple[str, ...] = ()  # provenance columns copied into the measurement log


PAIR_COLUMNS: dict[str, _PairColumns] = {
    "eval-set": _PairColumns("comparison_id", "pack", "anchor_code", "candidate_code",
                             "aggregated_speedup", "true_bin",
                             ("source_id", "source_search", "internal_experiment")),
    "rl-training-pool": _PairColumns("row_id", "pack", "anchor_code", "candidate_code",
                                     "aggregated_speedup", "relative_bin",
                                     ("pair_type", "source_id", "source_search", "internal_experiment")),
    "discovery-pairs": _PairColumns("pair_id", "problem_id", "parent_code", "child_code",
                                    "g_speedup", "true_bin",
                                    ("benchmark_family", "parent_node_id", "child_node_id",
                                     "source_id", "source_search", "internal_experiment")),
}
PREDICTION_COLUMNS = ("comparison_id", "surrogate_label", "repeat", "bin_probabilities")

# Datasheet facts for the GPUs the study names, keyed by the short GPU key.
KNOWN_GPUS: dict[str, dict[str, Any]] = {
    "a100": dict(compute_capability="8.0", sm_count=108, memory_mib=81920, l2_cache_mib=40.0,
                 max_threads_per_sm=2048, mem_bus_width_bits=5120),
    "h100": dict(compute_capability="9.0", sm_count=132, memory_mib=81559, l2_cache_mib=50.0,
                 max_threads_per_sm=2048, mem_bus_width_bits=5120),
    "l40s": dict(compute_capability="8.9", sm_count=142, memory_mib=46068, l2_cache_mib=96.0,
                 max_threads_per_sm=1536, mem_bus_width_bits=384),
}


@dataclass
class ImportResult:
    """What an import produced. `skipped` maps a reason to a row count."""

    kind: str
    rows: int = 0
    records: RecordSet = field(default_factory=RecordSet)
    forecasts: list[Forecast] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    label_disagreements: int = 0  # imported rows whose stored label differs from the recomputed bin
    bin_convention: str = bins.DEFAULT_CONVENTION  # the convention the bins were recomputed with

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    def summary(self) -> str:
        rs = self.records
        s = (f"{self.kind}: {self.rows} rows -> {len(rs.problems)} problems, "
             f"{len(rs.candidates)} candidates, {len(rs.measurements)} measurements, "
             f"{len(self.forecasts)} forecasts; stored bin label differed from the bin recomputed "
             f"with the {self.bin_convention} convention in {self.label_disagreements} rows")
        if self.skipped:
            s += "; skipped: " + ", ".join(f"{n} {why}" for why, n in sorted(self.skipped.items()))
        return s


# --------------------------------------------------------------------------- reading rows
def read_rows(name_or_path: str | Path, kind: str) -> list[dict[str, Any]]:
    """Rows of a local Parquet/JSONL file or directory, or of a Hub dataset (needs `datasets`)."""
    _check_kind(kind)
    p = Path(name_or_path)
    if p.exists():
        return _read_local(p)
    name = str(name_or_path)
    if name.count("/") != 1 or name.startswith((".", "/")):
        raise DatasetError(f"{name}: no such file or directory, and not a Hub dataset name "
                           f"(owner/name, e.g. {HUB_PREFIX}{kind})")
    return _read_hub(name, kind)


def _read_local(p: Path) -> list[dict[str, Any]]:
    files = sorted(f for f in p.rglob("*") if f.suffix in (".parquet", ".jsonl", ".json")) \
        if p.is_dir() else [p]
    if not files:
        raise DatasetError(f"{p}: no .parquet or .jsonl files inside")
    rows: list[dict[str, Any]] = []
    for f in files:
        try:
            if f.suffix == ".parquet":
                rows.extend(pq.read_table(f).to_pylist())
            elif f.suffix in (".jsonl", ".json"):
                with f.open() as fh:
                    rows.extend(json.loads(line) for line in fh if line.strip())
            else:
                raise DatasetError(f"{f}: unsupported file type; use .parquet or .jsonl")
        except (OSError, ValueError) as e:
            raise DatasetError(f"{f}: cannot read ({e}); pass a Parquet or JSON-lines file") from e
    return rows


def _read_hub(name: str, kind: str) -> list[dict[str, Any]]:
    try:
        from datasets import load_dataset
    except ImportError as e:
        raise DatasetError(f"reading {name} from the Hub needs the `datasets` package "
                           "(pip install datasets); or pass a local .parquet/.jsonl path") from e
    rows: list[dict[str, Any]] = []
    for config, split in HUB_CONFIGS[kind]:
        try:
            ds = load_dataset(name, name=config, split=split)
        except Exception as e:  # noqa: BLE001 - network, auth and schema errors all end here
            raise DatasetError(f"cannot load {name} (config {config}, split {split}) from the Hub: "
                               f"{e}. Download its Parquet files and pass the local path") from e
        rows.extend(dict(r) for r in ds)
    return rows


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise DatasetError(f"unknown study dataset kind {kind!r}; choose one of {', '.join(KINDS)}")


def _check_convention(convention: str) -> None:
    if convention not in bins.CONVENTIONS:
        raise DatasetError(f"unknown bin convention {convention!r}; choose one of "
                           f"{', '.join(bins.CONVENTIONS)}")


def _require(rows: list[dict], columns: Iterable[str], kind: str) -> None:
    if not rows:
        return
    missing = [c for c in columns if c not in rows[0]]
    if missing:
        raise DatasetError(f"rows lack the {kind} columns {missing}; is --kind right? "
                           f"(found: {sorted(rows[0])})")


# --------------------------------------------------------------------------- mapping
def study_hardware(device_name: str) -> Hardware:
    """A Hardware record for a GPU named in the study ("NVIDIA A100-SXM4-80GB" -> key "a100")."""
    from workbench.execution.hardware import gpu_key

    key = gpu_key(device_name)
    return Hardware(key=key, name=device_name, kind="cuda", **KNOWN_GPUS.get(key, {}))


def _problem_for(kind: str, group: str, anchor: str, level: int) -> Problem:
    h = hashlib.sha256(anchor.encode()).hexdigest()[:8]
    what = "parent kernel" if kind == "discovery-pairs" else "reference kernel"
    return Problem(id=f"study/{group}/{h}", level=level, name=group, source=anchor,
                   description=f"The {what} of GPU Forecasters study rows ({kind}, {group}); "
                               "imported speedups are relative to it.",
                   category=group, dtype="", tags=("study", kind), origin=f"study:{kind}")


def _speedup(value: Any) -> float | None:
    try:
        s = float(value)
    except (TypeError, ValueError):
        return None
    return s if math.isfinite(s) and s > 0 else None


def import_pairs(rows: list[dict[str, Any]], kind: str, progress: bool = False,
                 bin_convention: str = bins.DEFAULT_CONVENTION
                 ) -> tuple[ImportResult, dict[str, Measurement]]:
    """Map rows of a pair kind to records; also returns row id -> measurement (for joins).

    The store keys a candidate by its source and a measurement by (candidate, hardware), so a
    candidate already imported against another anchor, or a repeated (candidate, GPU) pair, is
    skipped and counted; a repeated pair's row id still maps to the first measurement.
    """
    _check_kind(kind)
    _check_convention(bin_convention)
    cols = PAIR_COLUMNS[kind]
    _require(rows, (cols.row_id, cols.group, cols.anchor, cols.candidate, cols.speedup,
                    cols.label, "hardware"), kind)
    res = ImportResult(kind=kind, rows=len(rows), bin_convention=bin_convention)
    problems: dict[str, Problem] = {}
    cands: dict[str, Candidate] = {}
    meas: dict[tuple[str, str], Measurement] = {}
    by_row: dict[str, Measurement] = {}
    parents: dict[str, Candidate] = {}
    hw_cache: dict[str, Hardware] = {}
    for r in _progress(rows, f"import {kind}", progress):
        s = _speedup(r.get(cols.speedup))
        if s is None:
            res.skip("without a positive finite speedup")
            continue
        if not r.get(cols.anchor) or not r.get(cols.candidate):
            res.skip("without source code")
            continue
        level = 3 if r.get("benchmark_family") == "kernelbench_l3" else 0
        prob = _problem_for(kind, str(r[cols.group]), r[cols.anchor], level)
        parent_id = None
        if kind == "discovery-pairs":  # the parent is a kernel of the lineage too
            parent = Candidate.from_source(prob.id, r[cols.anchor], origin=f"study:{kind}:parent",
                                           created_at="")
            parent_id = parent.id
        cand = Candidate.from_source(prob.id, r[cols.candidate], parent_id=parent_id,
                                     generation=1 if parent_id else 0,
                                     origin=f"study:{kind}:{r[cols.group]}", created_at="")
        hw = hw_cache.get(r["hardware"]) or hw_cache.setdefault(r["hardware"], study_hardware(r["hardware"]))
        key = (cand.id, hw.key)
        seen = cands.get(cand.id)
        if seen is not None and seen.problem_id != prob.id:
            res.skip("candidates already imported against another anchor")
            continue
        if key in meas:
            by_row[str(r[cols.row_id])] = meas[key]
            res.skip("repeated (candidate, GPU) pairs")
            continue
        if parent_id is not None:
            parents.setdefault(parent_id, parent)
        stored = r.get(cols.label)
        if stored is not None and int(stored) != bins.bin_of_convention(s, bin_convention) + 1:
            res.label_disagreements += 1
        provenance = {c: r.get(c) for c in (cols.row_id, cols.group, cols.label) + cols.extra}
        m = Measurement(candidate_id=cand.id, problem_id=prob.id, hardware_key=hw.key,
                        status=Status.OK, hardware_fingerprint=hw.fingerprint, speedup=s,
                        log=json.dumps({"study": kind, **provenance}, sort_keys=True, default=str),
                        hardware_json=json.dumps(hw.to_dict(), sort_keys=True), measured_at="")
        problems.setdefault(prob.id, prob)
        cands[cand.id] = cand
        meas[key] = m
        by_row[str(r[cols.row_id])] = m
    for pid, parent in parents.items():  # parents that were never a measured child themselves
        cands.setdefault(pid, parent)
    res.records = RecordSet(list(problems.values()), list(cands.values()), list(meas.values()))
    return res, by_row


def _probabilities(value: Any) -> tuple[float, ...] | None:
    """8 probabilities from [{bin: 1..8, p}, ...] or a plain list of 8 numbers; None if invalid."""
    if value is None:
        return None
    items = list(value)
    p = [0.0] * bins.N_BINS
    if items and isinstance(items[0], dict):
        for it in items:
            b, x = it.get("bin"), it.get("p")
            if b is None or x is None or not 1 <= int(b) <= bins.N_BINS or float(x) < 0:
                return None
            p[int(b) - 1] += float(x)
    elif len(items) == bins.N_BINS:
        p = [float(x) for x in items]
        if any(x < 0 for x in p):
            return None
    else:
        return None
    return tuple(p)


def import_predictions(rows: list[dict[str, Any]], eval_rows: list[dict[str, Any]],
                       progress: bool = False, bin_convention: str = bins.DEFAULT_CONVENTION
                       ) -> ImportResult:
    """Map eval-set-predictions rows to Forecasts, joined to the eval set on comparison_id.

    The result also holds the eval set's records, so the forecasts' candidates exist. The
    forecaster name is `study:<surrogate_label>:r<repeat>` (one forecaster per repeat, since a
    store keeps one forecast per forecaster and candidate). A failed parse, or probabilities
    that sum to zero, becomes an abstention.
    """
    _require(rows, PREDICTION_COLUMNS, "eval-set-predictions")
    base, by_row = import_pairs(eval_rows, "eval-set", progress=False,
                                bin_convention=bin_convention)
    res = ImportResult(kind="eval-set-predictions", rows=len(rows), records=base.records,
                       skipped={f"eval-set rows {k}": v for k, v in base.skipped.items()},
                       label_disagreements=base.label_disagreements,
                       bin_convention=bin_convention)
    forecasts: dict[tuple, Forecast] = {}
    for r in _progress(rows, "import eval-set-predictions", progress):
        m = by_row.get(str(r["comparison_id"]))
        if m is None:
            res.skip("predictions without a matching eval-set row")
            continue
        name = f"study:{r['surrogate_label']}:r{int(r.get('repeat') or 0)}"
        cost = dict(prompt_tokens=int(r.get("input_tokens") or 0),
                    completion_tokens=int(r.get("output_tokens") or 0),
                    seconds=float(r.get("elapsed_s") or 0.0), created_at="")
        p = _probabilities(r.get("bin_probabilities"))
        if r.get("parse_failed") or p is None or sum(p) <= 0:
            f = Forecast.abstention(name, m.candidate_id, m.problem_id, m.hardware_key,
                                    reason=str(r.get("parse_error") or "the forecaster's answer did not parse"),
                                    **cost)
        else:
            raw = r.get("raw_probability_sum")
            f = Forecast(forecaster=name, candidate_id=m.candidate_id, problem_id=m.problem_id,
                         hardware_key=m.hardware_key, probabilities=p,
                         reasoning=str(r.get("reasoning") or ""),
                         raw_sum=float(raw) if raw is not None else float(sum(p)),
                         parse_status=ParseStatus.OK, **cost)
        forecasts[(name, m.candidate_id, m.hardware_key)] = f
    res.forecasts = list(forecasts.values())
    return res


def import_study(name_or_path: str | Path, kind: str, store=None,
                 eval_set: str | Path | None = None, progress: bool = False,
                 bin_convention: str = bins.DEFAULT_CONVENTION) -> ImportResult:
    """Read a study dataset (local path or Hub name), map it, and upsert it into `store` if given.

    For `eval-set-predictions`, `eval_set` names the eval set to join with (local path or Hub
    name; default the Hub's `codezakh/gpu-forecasters-eval-set`).
    """
    _check_kind(kind)
    _check_convention(bin_convention)
    rows = read_rows(name_or_path, kind)
    if kind == "eval-set-predictions":
        eval_rows = read_rows(eval_set or HUB_PREFIX + "eval-set", "eval-set")
        res = import_predictions(rows, eval_rows, progress, bin_convention)
    else:
        res, _ = import_pairs(rows, kind, progress, bin_convention)
    if store is not None:
        rs = res.records
        store.put_problems(rs.problems)
        store.put_candidates(rs.candidates)
        store.put_measurements(rs.measurements)
        if res.forecasts:
            store.put_forecasts(res.forecasts)
    return res


def _progress(rows: list, desc: str, enabled: bool):
    from tqdm import tqdm

    return tqdm(rows, desc=desc, unit="row", disable=not enabled)
