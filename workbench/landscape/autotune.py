"""A forecaster as Triton's autotuner performance model.

`triton.autotune(configs=..., key=..., prune_configs_by={"perf_model": pm, "top_k": k})` calls
`pm(**kernel_args, **meta_args, **config.all_kwargs())` for every config and benchmarks only the
k with the lowest returned value. `ForecastPerfModel` answers that call: `ConfigPointMap` turns
the config's values (its kwargs plus num_warps / num_stages) into a point of the problem's
kernel family, the family renders that point's candidate, and the forecaster forecasts its
speedup over the problem's reference. The returned estimate is `reference_ms` / 2^E[log2 S]
(milliseconds when `reference_ms` is the reference's time; with the default 1.0 it is in units
of the reference's time): lower is better, as Triton expects.

What the adapter does not do: it does not check that the kernel being tuned computes what the
family's rendered point computes; the caller maps each config to the point of the same design
(`matmul_tiled_map` for the family's "tiled" matmul). A config the map cannot place in the
family (a value the family does not take, a point its constraint rules out) gets +inf, so the
pruner drops it first; `unmapped` counts them. An abstained forecast counts as no speedup
(estimate = `reference_ms`).
"""
from __future__ import annotations

import hashlib
import math
import random
from typing import Any, Iterable, Mapping

from workbench.errors import WorkbenchError
from workbench.families import Family, FamilyError

#: Names Triton passes for a config's launch settings (Config.all_kwargs()).
LAUNCH_KWARGS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


class AutotuneMapError(WorkbenchError):
    """A config <-> family point map is inconsistent with its family."""


class ConfigPointMap:
    """Which config value is which family parameter.

    `from_config` maps a family parameter to the name Triton passes it under (a Config kwarg
    such as "BM", or "num_warps" / "num_stages"); `fixed` pins every other parameter. Every
    parameter of the family is exactly one of the two (AutotuneMapError otherwise)."""

    def __init__(self, family: Family, from_config: Mapping[str, str], fixed: Mapping[str, Any]):
        names = set(family.param_names)
        both = set(from_config) & set(fixed)
        missing = names - set(from_config) - set(fixed)
        unknown = (set(from_config) | set(fixed)) - names
        if both or missing or unknown:
            raise AutotuneMapError(f"{family.name}: every parameter must come from the config or be fixed, "
                                   f"once (both: {sorted(both)}, neither: {sorted(missing)}, unknown: {sorted(unknown)})")
        self.family = family
        self.from_config = dict(from_config)
        self.fixed = dict(fixed)

    def point(self, values: Mapping[str, Any]) -> tuple:
        """The family point of a config's values (the perf_model's keyword arguments);
        FamilyError when a value is missing or the point is not valid in the family."""
        missing = [v for v in self.from_config.values() if v not in values]
        if missing:
            raise FamilyError(f"{self.family.name}: the config lacks {', '.join(missing)}")
        return self.family.point(**self.fixed, **{p: values[v] for p, v in self.from_config.items()})

    def config_values(self, point: Iterable) -> dict[str, Any]:
        """A point's config values: {name Triton passes: value} (kwargs and launch settings)."""
        d = self.family.as_dict(tuple(point))
        for p, v in self.fixed.items():
            if d[p] != v:
                raise AutotuneMapError(f"{self.family.key(tuple(point))} has {p}={d[p]!r}, the map pins {v!r}")
        return {name: d[p] for p, name in self.from_config.items()}

    def points(self) -> list[tuple]:
        """The family's valid points that agree with the fixed values, in family order."""
        return [pt for pt in self.family.points()
                if all(self.family.as_dict(pt)[p] == v for p, v in self.fixed.items())]

    def configs(self, points: Iterable | None = None) -> list[Any]:
        """`triton.Config`s of `points` (default: every point of `points()`)."""
        import triton

        out = []
        for pt in (self.points() if points is None else points):
            vals = self.config_values(pt)
            launch = {k: vals.pop(k) for k in LAUNCH_KWARGS if k in vals}
            out.append(triton.Config(vals, **launch))
        return out


def matmul_tiled_map(family: Family) -> ConfigPointMap:
    """The matmul family's "tiled" design (no split-K, fused epilogue): block sizes BM, BN, BK,
    grouping GROUP, num_warps and num_stages are launch configs of one kernel."""
    if family.kind != "matmul":
        raise AutotuneMapError(f"{family.name} is a {family.kind} family, not matmul")
    return ConfigPointMap(family, {"bm": "BM", "bn": "BN", "bk": "BK", "group": "GROUP", "warps": "num_warps",
                                   "stages": "num_stages"}, {"algo": "tiled", "split": 1, "epilogue": "fused"})


class ForecastPerfModel:
    """`perf_model` for `prune_configs_by`: the forecaster's expected time of a config's point
    (see the module doc). Forecasts are cached per point; `prefetch` forecasts many in one batch.
    `calls` counts calls, `unmapped` the configs that are not family points."""

    def __init__(self, forecaster, problem, hardware, mapping: ConfigPointMap, reference_ms: float = 1.0):
        if mapping.family.problem_id != problem.id:
            raise AutotuneMapError(f"the map's family is {mapping.family.problem_id}'s, the problem is {problem.id}")
        if not reference_ms > 0:
            raise AutotuneMapError(f"reference_ms must be positive, got {reference_ms}")
        self.forecaster, self.problem, self.hardware = forecaster, problem, hardware
        self.mapping, self.reference_ms = mapping, float(reference_ms)
        self._log2: dict[tuple, float] = {}
        self.calls = 0
        self.unmapped = 0

    def prefetch(self, points: Iterable) -> None:
        """Forecast the points not yet forecast, in one batch."""
        todo = [tuple(pt) for pt in points if tuple(pt) not in self._log2]
        if not todo:
            return
        fam = self.mapping.family
        fs = self.forecaster.forecast_batch([(self.problem, fam.candidate(pt)) for pt in todo], self.hardware,
                                            relative_to="reference")
        for pt, f in zip(todo, fs):
            self._log2[pt] = 0.0 if f.abstained else float(f.expected_log2_speedup)

    def expected_log2_speedup(self, point: Iterable) -> float:
        pt = tuple(point)
        self.prefetch([pt])
        return self._log2[pt]

    def __call__(self, **values: Any) -> float:
        self.calls += 1
        try:
            pt = self.mapping.point(values)
        except FamilyError:
            self.unmapped += 1
            return math.inf
        return self.reference_ms / 2.0 ** self.expected_log2_speedup(pt)


class RandomPerfModel:
    """The control: an estimate drawn uniformly from [0, 1) by a generator seeded with `seed`
    and the config's values (not the call order), so pruning by it keeps a uniformly random
    top k of the configs."""

    def __init__(self, seed: int, names: Iterable[str]):
        self.seed = int(seed)
        self.names = tuple(sorted(names))

    def __call__(self, **values: Any) -> float:
        key = repr([(n, values.get(n)) for n in self.names])
        digest = hashlib.sha256(f"{self.seed}\0{key}".encode()).hexdigest()
        return random.Random(digest).random()


def family_map(family: Family) -> ConfigPointMap:
    """Every parameter of `family` comes from the config, under its own name: a config is a whole
    family point (algorithm included), for autotuning over the family with `FamilyLauncher`."""
    return ConfigPointMap(family, {p: p for p in family.param_names}, {})


class FamilyLauncher:
    """What `triton.autotune` tunes when a config is a whole family point: `run(*inputs,
    **config values)` renders the point (`family_map`), imports its source once per launcher from
    `workdir` (the file of a point keeps its name and path, so Triton's on-disk cache serves every
    launcher of the same point) and calls its `ModelNew`, built with `init_inputs` and given the
    reference model's weights (`reference`, by name), on `inputs` already on the device.

    `arg_names` and `fn` are what `triton.runtime.autotuner.Autotuner` reads from the function it
    wraps. Launch settings Triton adds to a call (num_warps, num_stages, ...) are not used: the
    rendered point carries its own. `first_call_s` holds, per point key, the wall time of the
    point's first call in this launcher (import, compile or cache load, one run, synchronised).
    Keyword arguments that name no family parameter (launch settings, grid, warmup) are ignored.

    The sources run here are the project's own family renderings; a model-written candidate must
    go through the sandboxed executor instead, never through this class."""

    def __init__(self, family: Family, workdir, arg_names: Iterable[str], init_inputs=(), reference=None,
                 device: str = "cuda"):
        from pathlib import Path

        self.family, self.workdir, self.device = family, Path(workdir), device
        self.arg_names = list(arg_names)
        self.init_inputs, self.reference = tuple(init_inputs), reference
        self.map = family_map(family)
        self._models: dict[tuple, Any] = {}
        self.first_call_s: dict[str, float] = {}
        self.fn = _family_point_call  # a plain function: Autotuner walks `.fn` until it finds one

    def model(self, point: tuple):
        """The point's `ModelNew` in this launcher (imported and built on first use)."""
        import importlib.util

        if point not in self._models:
            cand = self.family.candidate(point)
            path = self.workdir / f"point_{cand.id[:24]}.py"
            if not path.exists():
                path.write_text(cand.source)
            spec = importlib.util.spec_from_file_location(f"wb_point_{cand.id[:24]}", path)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            model = mod.ModelNew(*self.init_inputs)
            if self.reference is not None:
                from workbench.execution.worker import copy_state

                copy_state(self.reference, model)
            self._models[point] = model.to(self.device)
        return self._models[point]

    def run(self, *args: Any, **values: Any):
        import time

        import torch

        names = self.family.param_names
        point = self.map.point({k: v for k, v in values.items() if k in names})
        key = self.family.key(point)
        first = key not in self.first_call_s
        t0 = time.perf_counter()
        with torch.no_grad():
            out = self.model(point)(*args)
        if first:
            if torch.device(self.device).type == "cuda":
                torch.cuda.synchronize()
            self.first_call_s[key] = time.perf_counter() - t0
        return out


def _family_point_call(*args: Any, **kwargs: Any) -> None:  # pragma: no cover - never called
    """Stands for FamilyLauncher in Triton's autotuner (which only reads its name)."""
