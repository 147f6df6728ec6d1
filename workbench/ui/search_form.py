"""The search form as a `param.Parameterized`: its selectors' objects and defaults come from the
registry (`workbench.spec.registry`), so the app offers exactly what the CLI does, with the same
defaults. `SearchForm.spec()` is the `SearchSpec` the form describes; `widgets()` renders the
parameters the page shows (each widget linked both ways to its parameter)."""
from __future__ import annotations

import panel as pn
import param

from workbench.spec import DEFAULTS, SearchSpec, registry as reg


class SearchForm(param.Parameterized):
    """What to search, where, with what. gpu: the target string of the chosen GPU (the objects
    are set per store: its replays, local GPUs, a Ray cluster)."""

    problem = param.String(default="", doc="problem id")
    gpu = param.Selector(default=None, objects=[], check_on_set=False, doc="target string (replay:h100, cuda:0, ...)")
    forecaster = param.Selector(default=DEFAULTS["forecaster"], objects=list(reg.forecaster_names("search")))
    generator = param.Selector(default=DEFAULTS["generator"], objects=list(reg.generator_names("app")))
    method = param.Selector(default=DEFAULTS["method"], objects=list(reg.METHODS))
    budget = param.Integer(default=DEFAULTS["budget"], doc="GPU measurements allowed, seeds included "
                           "(no bounds: the spec refuses one below 1 with a message)")
    seed = param.Integer(default=DEFAULTS["seed"])
    k = param.Integer(default=DEFAULTS["k"], doc="children measured per parent")
    m = param.Integer(default=DEFAULTS["m"], doc="screening factor: m*k children generated per parent")
    max_seeds = param.Integer(default=DEFAULTS["max_seeds"], doc="seed kernels measured at the start")

    def __init__(self, gpus: dict[str, str] | None = None, **params):
        super().__init__(**params)
        if gpus is not None:
            self.param.gpu.objects = dict(gpus)
            if self.gpu is None:
                self.gpu = next(iter(gpus.values()), None)

    def spec(self, problem: str | None = None, **overrides) -> SearchSpec:
        """The spec of the form's values (`problem` instead of the form's when given); live
        targets are measured by $WORKBENCH_EXECUTOR (`workbench.ui.runner.app_spec`)."""
        from workbench.ui.runner import app_spec

        choices = dict(problem=problem or self.problem, gpu=self.gpu, method=self.method,
                       forecaster=self.forecaster, budget=self.budget, seed=self.seed, k=self.k, m=self.m,
                       max_seeds=self.max_seeds, generator=self.generator)
        choices.update(overrides)
        return app_spec(**choices)

    def widgets(self, problem_options: dict[str, str]) -> dict[str, pn.widgets.Widget]:
        """The shown widgets, by parameter: problem (type to filter), GPU, forecaster, generator,
        method, budget."""
        return {
            "problem": pn.widgets.AutocompleteInput.from_param(
                self.param.problem, name="Problem (type a name, level or tag)", options=problem_options,
                case_sensitive=False, search_strategy="includes", min_characters=1, restrict=True,
                css_classes=["wb-problem"]),
            "gpu": pn.widgets.Select.from_param(self.param.gpu, name="GPU"),
            "forecaster": pn.widgets.Select.from_param(self.param.forecaster, name="Forecaster"),
            "generator": pn.widgets.Select.from_param(self.param.generator, name="Generator"),
            "method": pn.widgets.Select.from_param(self.param.method, name="Method"),
            "budget": pn.widgets.IntInput.from_param(self.param.budget, name="Budget (GPU measurements)"),
        }
