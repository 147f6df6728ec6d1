"""Datasets: the shipped measurement layout and torch.compile baselines, Hugging Face export,
study importers and stats.

    from workbench.dataset import write_shipped, load_shipped, load_into_store, export_hf, \\
        import_study, stats
    from workbench.dataset import load_compile_baselines, speedup_over_compile

Schemas: SCHEMA.md beside this file.
"""
from __future__ import annotations

from workbench.dataset.baselines import (CompileBaseline, load_compile_baselines, over_compile,
                                         shipped_compile_baselines, speedup_over_compile)
from workbench.dataset.errors import DatasetError
from workbench.dataset.hf import export_hf, hf_rows
from workbench.dataset.shipped import (DEFAULT_SHIPPED_DIR, load_into_store, load_shipped,
                                       shipped_rows, write_shipped)
from workbench.dataset.sources import RecordSet, collect
from workbench.dataset.stats import DatasetStats, stats
from workbench.dataset.study import KINDS, ImportResult, import_study, read_rows

__all__ = [
    "CompileBaseline", "DEFAULT_SHIPPED_DIR", "DatasetError", "DatasetStats", "ImportResult",
    "KINDS", "RecordSet", "collect", "export_hf", "hf_rows", "import_study",
    "load_compile_baselines", "load_into_store", "load_shipped", "over_compile", "read_rows",
    "shipped_compile_baselines", "shipped_rows", "speedup_over_compile", "stats", "write_shipped",
]
