"""The registry is the single source of names and defaults: the CLI's choices and defaults,
the app form's selectors and defaults and the benchmarks' options all equal it; and the app
(workbench/ui, widgets) never imports the CLI's command modules."""
from __future__ import annotations

import argparse
import ast
import importlib.util
import sys
from pathlib import Path

import pytest

from workbench.spec import SearchSpec, registry as reg
from workbench.spec.registry import DEFAULTS

ROOT = Path(__file__).resolve().parents[2]


def _imports(path: Path) -> set[str]:
    """Every module a file imports (absolute names; `from x import y` gives x and x.y)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


def test_no_module_of_the_app_imports_the_commands():
    files = sorted((ROOT / "workbench" / "ui").rglob("*.py")) + sorted((ROOT / "widgets").rglob("*.py"))
    assert len(files) > 5
    offenders = {str(f.relative_to(ROOT)): sorted(n for n in _imports(f)
                                                  if n == "workbench.commands" or n.startswith("workbench.commands."))
                 for f in files}
    assert {f: n for f, n in offenders.items() if n} == {}


def test_the_import_check_sees_every_import_form(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("def g():\n    from workbench.commands.search import build_run\n"
                 "import workbench.commands.common as c\nfrom workbench import commands\n")
    assert {"workbench.commands.search", "workbench.commands.common", "workbench.commands"} <= _imports(f)


def _options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {a.option_strings[-1]: a for a in parser._actions if a.option_strings}


def _subparser(name: str) -> argparse.ArgumentParser:
    from workbench.cli import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[name]


def test_cli_search_choices_and_defaults_are_the_registry():
    o = _options(_subparser("search"))
    assert tuple(o["--forecaster"].choices) == reg.forecaster_names("search")
    assert tuple(o["--generator"].choices) == reg.generator_names("cli") == tuple(reg.GENERATORS)
    assert tuple(o["--method"].choices) == reg.METHODS
    assert tuple(o["--selector"].choices) == reg.SELECTORS
    assert tuple(o["--reference-time"].choices) == reg.REFERENCE_TIMES
    assert tuple(o["--executor"].choices) == reg.EXECUTORS
    for flag, key in (("--gpu", "target"), ("--generator", "generator"),
                      ("--method", "method"), ("--budget", "budget"), ("--seed", "seed"), ("--k", "k"),
                      ("--m", "m"), ("--max-seeds", "max_seeds"), ("--selector", "selector"),
                      ("--in-flight", "in_flight"), ("--reference-time", "reference_time")):
        assert o[flag].default == DEFAULTS[key], flag
    # The forecaster's default depends on the target: the registry's, the roofline on the CPU.
    assert o["--forecaster"].default is None
    assert reg.default_forecaster("replay") == reg.default_forecaster("cuda") == DEFAULTS["forecaster"]
    assert reg.default_forecaster("cpu") == reg.default_forecaster("ray", "cpu") == reg.CPU_FORECASTER


def test_other_commands_forecasters_are_the_registry():
    assert tuple(_options(_subparser("evaluate"))["--forecaster"].choices) == reg.forecaster_names("evaluate")
    assert tuple(_options(_subparser("forecast"))["--forecaster"].choices) == reg.forecaster_names("forecast")


def test_spec_defaults_are_the_registry():
    spec = SearchSpec("L1/01_softmax")
    assert str(spec.target) == DEFAULTS["target"]
    assert (spec.forecaster.name, spec.generator.name, spec.method.name) == (
        DEFAULTS["forecaster"], DEFAULTS["generator"], DEFAULTS["method"])
    assert (spec.method.k, spec.method.m, spec.budget, spec.seed, spec.max_seeds, spec.selector, spec.in_flight) == (
        DEFAULTS["k"], DEFAULTS["m"], DEFAULTS["budget"], DEFAULTS["seed"], DEFAULTS["max_seeds"],
        DEFAULTS["selector"], DEFAULTS["in_flight"])
    assert (spec.forecaster.reference_time, spec.forecaster.adapt) == (DEFAULTS["reference_time"], DEFAULTS["adapt"])


def test_the_app_form_selectors_and_defaults_are_the_registry(tmp_path):
    from workbench.problems import list_problems
    from workbench.store import Store
    from workbench.ui.runner import SearchRunner
    from workbench.ui.search_form import SearchForm
    from workbench.ui.search_view import SearchView

    p = SearchForm.param
    assert p.forecaster.objects == list(reg.forecaster_names("search"))
    assert p.generator.objects == list(reg.generator_names("app"))
    assert set(reg.generator_names("app")) <= set(reg.GENERATORS)
    assert p.method.objects == list(reg.METHODS)
    for name, key in (("forecaster", "forecaster"), ("generator", "generator"), ("method", "method"),
                      ("budget", "budget"), ("seed", "seed"), ("k", "k"), ("m", "m"), ("max_seeds", "max_seeds")):
        assert getattr(p, name).default == DEFAULTS[key], name
    with Store(tmp_path / "db.sqlite") as store:
        store.put_problems(list_problems())
        view = SearchView(store, SearchRunner(store))
        assert list(view.forecaster.options.values()) == list(reg.forecaster_names("search"))
        assert list(view.generator.options.values()) == list(reg.generator_names("app"))
        assert list(view.method.options.values()) == list(reg.METHODS)
        assert (view.forecaster.value, view.generator.value, view.method.value, view.budget.value) == (
            DEFAULTS["forecaster"], DEFAULTS["generator"], DEFAULTS["method"], str(DEFAULTS["budget"]))


def _bench(name: str):
    path = ROOT / "benchmarks" / f"{name}.py"
    sys.path.insert(0, str(path.parent))
    try:
        spec = importlib.util.spec_from_file_location(f"_bench_{name}", path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod  # dataclasses of the module look themselves up there
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(str(path.parent))
    return mod


def _bench_options(mod, monkeypatch) -> dict[str, argparse.Action]:
    """The argparse options a benchmark's main() declares (parsing stops before any work)."""
    seen = {}

    class Stop(Exception):
        pass

    def parse_args(self, argv=None, namespace=None):
        seen.update(_options(self))
        raise Stop

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse_args)
    with pytest.raises(Stop):
        mod.main([])
    return seen


@pytest.mark.parametrize("name", ["search_bench", "search_landscape"])
def test_benchmark_options_are_the_registry(name, monkeypatch):
    mod = _bench(name)
    o = _bench_options(mod, monkeypatch)
    assert tuple(o["--forecaster"].choices) == reg.forecaster_names("bench")
    assert o["--forecaster"].default == DEFAULTS["forecaster"]
    assert (o["--k"].default, o["--m"].default) == (DEFAULTS["k"], DEFAULTS["m"])
    if name == "search_bench":
        assert (o["--budget"].default, o["--max-seeds"].default) == (DEFAULTS["budget"], DEFAULTS["max_seeds"])
    else:
        assert list(mod.FORECASTERS) == list(reg.forecaster_names("bench"))
