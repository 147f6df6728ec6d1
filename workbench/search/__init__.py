"""Kernel search: archive + parent selection, generators, methods, and the run loop.

Budget is counted in GPU measurements; every event is persisted so runs can be watched,
resumed and replayed. See loop.py for the event model.
"""
from __future__ import annotations

from workbench.search.archive import Archive, Entry
from workbench.search.generators import (FailedGeneration, GenerationContext, Generator, LLMGenerator,
                                         MutationGenerator, ReplayGenerator, ZooGenerator)
from workbench.search.loop import SearchRun, best_curve
from workbench.search.methods import (METHODS, MeasureAll, Method, Plan, ScreenTopK, Selective,
                                      UncertaintyAware, expected_improvement, make_method)
from workbench.search.mutations import OPS, MutationRefused, mutate, neighbourhood
from workbench.search.selection import IslandSelector, PUCTSelector, Selector, make_selector

__all__ = [
    "Archive", "Entry", "FailedGeneration", "GenerationContext", "Generator", "LLMGenerator",
    "MutationGenerator", "ReplayGenerator", "ZooGenerator", "SearchRun", "best_curve", "METHODS",
    "MeasureAll", "Method", "Plan", "ScreenTopK", "Selective", "UncertaintyAware",
    "expected_improvement", "make_method", "OPS", "MutationRefused", "mutate", "neighbourhood",
    "IslandSelector", "PUCTSelector", "Selector", "make_selector",
]
