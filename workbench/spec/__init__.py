"""A search as a value (`SearchSpec`) and the one registry of names and defaults it is built
from. `workbench.compose` turns a spec into a running `SearchRun`."""
from __future__ import annotations

from workbench.spec import registry
from workbench.spec.registry import DEFAULTS
from workbench.spec.search import ForecasterChoice, GeneratorChoice, MethodChoice, SearchSpec
from workbench.spec.target import Target, TargetError

__all__ = ["DEFAULTS", "ForecasterChoice", "GeneratorChoice", "MethodChoice", "SearchSpec", "Target",
           "TargetError", "registry"]
