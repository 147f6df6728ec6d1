"""The one registry of names a search (and the commands around it) can choose from, and the one
set of defaults.

The CLI's choices and defaults, the app form's selectors and the benchmarks' options all read
this module; a test holds them to it. Order matters: it is the order choices are listed in.

Forecasters are tagged by where they can be used:
  search    a search's surrogate (`SearchSpec.forecaster`; "none" = no forecaster, measure_all only)
  evaluate  scored by `workbench evaluate` (the controls random / climatology only there)
  forecast  `workbench forecast` on one candidate
  bench     the search benchmarks (fitted or analytic, no model server needed)
"""
from __future__ import annotations

from dataclasses import dataclass

from workbench.errors import ConfigError
from workbench.search.methods import METHODS as _METHODS


@dataclass(frozen=True)
class Choice:
    """One registered name: what it means (shown as help) and where it can be used."""

    name: str
    help: str
    uses: frozenset[str]


def _choices(*rows: tuple[str, str, str]) -> dict[str, Choice]:
    return {name: Choice(name, text, frozenset(uses.split())) for name, uses, text in rows}


FORECASTERS: dict[str, Choice] = _choices(
    ("learned", "search evaluate forecast bench",
     "features + gradient boosting, fitted on the database's measurements of other problems"),
    ("roofline", "search evaluate forecast bench", "analytic roofline estimate; nothing to fit"),
    ("llm", "search forecast", "a language model on an OpenAI-compatible server"),
    ("local", "search forecast", "a chat model run in this process with transformers, optionally "
     "with a LoRA adapter (an RL-trained one)"),
    ("random", "evaluate", "control: seeded random order, uniform probabilities"),
    ("climatology", "evaluate", "control: the training folds' bin frequencies"),
    ("none", "search", "no forecaster: every child is measured (measure_all only)"),
)

GENERATORS: dict[str, Choice] = _choices(
    ("auto", "cli app", "replay for a replay target, else mutation"),
    ("mutation", "cli app", "zoo kernels as seeds, mutation operators write the children"),
    ("replay", "cli", "seeds and children from the recorded measurements (replay targets)"),
    ("llm", "cli app", "a language model writes each child"),
    ("llm-guided", "cli app", "a language model chooses which mutation edits to apply"),
)

#: Search methods, in `workbench.search.methods` order (that module defines them).
METHODS: tuple[str, ...] = tuple(_METHODS)
SELECTORS: tuple[str, ...] = ("puct", "islands")
REFERENCE_TIMES: tuple[str, ...] = ("estimate", "measured")
EXECUTORS: tuple[str, ...] = ("local", "ray")
#: The target string forms `Target.parse` accepts.
TARGET_FORMS: tuple[str, ...] = ("replay:KEY", "cuda", "cuda:N", "cpu", "ray", "ray:ADDRESS",
                                 "ray-cpu", "ray-cpu:ADDRESS")

#: The defaults of every front-end (CLI, app form, notebooks, benchmarks).
DEFAULTS: dict[str, object] = {
    "target": "replay:h100",
    "forecaster": "learned",
    "generator": "auto",
    "method": "screen_topk",
    "budget": 40,
    "seed": 0,
    "k": 4,
    "m": 4,
    "max_seeds": 4,
    "selector": "puct",
    "in_flight": 1,
    "reference_time": "measured",
    "adapt": True,
}


#: The search forecaster a target gets when none is chosen: the learned one is fitted on
#: measurements of the target's GPU type, and a CPU run has none (its times are not GPU data),
#: so a CPU search defaults to the analytic roofline, which needs no fit.
CPU_FORECASTER = "roofline"


def default_forecaster(target_kind: str, device: str = "") -> str:
    """The default search forecaster for a target of `target_kind` (replay | cuda | cpu | ray; a
    ray target's `device`): `CPU_FORECASTER` for the CPU, else DEFAULTS["forecaster"]."""
    if target_kind == "cpu" or (target_kind == "ray" and device == "cpu"):
        return CPU_FORECASTER
    return str(DEFAULTS["forecaster"])


def forecaster_names(use: str) -> tuple[str, ...]:
    """Registered forecasters usable in `use` (search, evaluate, forecast, bench), in order."""
    if not any(use in c.uses for c in FORECASTERS.values()):
        raise ConfigError(f"no forecaster is registered for {use!r}; uses are search, evaluate, forecast, bench")
    return tuple(n for n, c in FORECASTERS.items() if use in c.uses)


def generator_names(use: str = "cli") -> tuple[str, ...]:
    """Registered generators offered by `use` (cli or app), in order."""
    return tuple(n for n, c in GENERATORS.items() if use in c.uses)


def check(kind: str, name: str, allowed: tuple[str, ...] | dict) -> str:
    """`name` if it is one of `allowed`, else a ConfigError listing them."""
    if name not in allowed:
        raise ConfigError(f"unknown {kind} {name!r}; choose one of {', '.join(allowed)}")
    return name
