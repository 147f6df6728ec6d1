"""The workbench's cache folder (fitted models, computed feature rows); no workbench imports, so
any module can ask for it."""
from __future__ import annotations

import os
from pathlib import Path

#: Environment variable naming the cache folder.
ENV_CACHE_DIR = "WORKBENCH_CACHE_DIR"
#: Folder name under the user's cache folder.
APP_DIR = "gpu-forecasters-workbench"


def cache_root(path: str | os.PathLike | None = None) -> Path:
    """`path`, else $WORKBENCH_CACHE_DIR, else $XDG_CACHE_HOME (or ~/.cache) /
    gpu-forecasters-workbench. Fitted models live in its `fitted/`
    (`workbench.forecast.fitted`), computed feature rows in its `features.sqlite`
    (`workbench.forecast.feature_store`)."""
    if path:
        return Path(path).expanduser()
    env = os.environ.get(ENV_CACHE_DIR, "").strip()
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(base).expanduser() / APP_DIR
