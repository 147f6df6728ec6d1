"""Loading a script of benchmarks/ in a test (the scripts are not a package)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load_bench(name: str, path: str | Path | None = None) -> ModuleType:
    """benchmarks/<name>.py (or the script at `path`) executed afresh as the module `name` and
    registered in sys.modules under that name (worker processes and dataclasses look a script's
    objects up there), with benchmarks/ on sys.path (the scripts import _common and each other by
    name)."""
    path = Path(path) if path is not None else BENCHMARKS / f"{name}.py"
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod
