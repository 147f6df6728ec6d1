"""One way to turn "a store or some records" into three lists of records.

Every function in `workbench.dataset` that reads data accepts any `DataSource`:
- a `workbench.store.Store` (everything in it),
- a `RecordSet` or a `(problems, candidates, measurements)` tuple of record iterables,
- a directory holding the shipped layout (see SCHEMA.md beside this file).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Union

from workbench.dataset.layout import load_shipped
from workbench.dataset.recordset import RecordSet, by_id  # noqa: F401 (re-exported)


DataSource = Union["Store", RecordSet, tuple, str, Path]  # noqa: F821 - Store imported lazily


def collect(source: Any, hardware_key: str | None = None) -> RecordSet:
    """Read any `DataSource` into a `RecordSet`, optionally keeping one GPU's measurements."""
    from workbench.store import Store

    if isinstance(source, RecordSet):
        rs = source
    elif isinstance(source, Store):
        ms = source.measurements(hardware_key=hardware_key or None)
        rs = RecordSet(source.problems(), source.candidates(), ms)
    elif isinstance(source, (str, Path)):
        rs = load_shipped(source)
    elif isinstance(source, tuple) and len(source) == 3:
        ps, cs, ms = source
        rs = RecordSet(list(ps), list(cs), list(ms))
    else:
        raise TypeError(f"expected a Store, a RecordSet, a (problems, candidates, measurements) "
                        f"tuple or a directory, got {type(source).__name__}")
    return rs.filter_hardware(hardware_key)
