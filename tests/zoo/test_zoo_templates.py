"""The zoo as templates and parameter tables: every variant renders to the bytes that were measured,
rendering is deterministic, and a malformed table is refused with a message naming the place."""
from __future__ import annotations

import collections
from pathlib import Path

import pytest

import workbench.zoo as zoo
from workbench.cli import main
from workbench.dataset import DEFAULT_SHIPPED_DIR, load_shipped
from workbench.errors import ConfigError
from workbench.zoo import render, zoo_kernel, zoo_kernels


def test_every_measured_zoo_variant_renders_to_the_measured_bytes():
    """The shipped data holds each zoo kernel's source as measured (origin zoo:<variant>); every
    variant the zoo still has renders to exactly that text, so its candidate id is unchanged."""
    if not Path(DEFAULT_SHIPPED_DIR).is_dir():
        pytest.skip("no shipped data")
    measured = {(c.problem_id, c.origin): c for c in load_shipped(DEFAULT_SHIPPED_DIR).candidates
                if c.origin.startswith("zoo:")}
    kernels = zoo_kernels()
    compared = 0
    for k in kernels:
        c = measured.get((k.problem_id, k.origin))
        if c is not None:
            assert k.source == c.source, f"{k.name} no longer renders to the measured source"
            assert k.candidate().id == c.id
            compared += 1
    templated = [k for k in kernels if k.template]
    assert compared >= 600 and len(templated) >= 400


def test_templated_variants_are_deterministic_and_distinct():
    first, again = zoo_kernels(), zoo_kernels()
    assert [k.source for k in first] == [k.source for k in again]
    by_template = collections.defaultdict(list)
    for k in first:
        if k.template:
            by_template[(k.problem_id, k.template)].append(k)
    assert len(by_template) >= 100
    for (pid, name), ks in by_template.items():
        assert len(ks) >= 2, f"{pid} template {name} has one variant: it should be a plain file"
        assert len({k.source for k in ks}) == len(ks), f"{pid} {name}: two rows render the same text"
        assert all(k.params for k in ks)


def test_one_problems_variants_and_one_lookup():
    ks = zoo_kernels("L1/01_softmax")
    assert [k.variant for k in ks] == sorted((k.variant for k in ks), key=lambda v: f"{v}.py")
    k = zoo_kernel("L1/01_softmax", "online_loop_b1024_w4")
    assert (k.template, k.params["BLOCK"], k.params["num_warps"]) == ("online_loop", 1024, 4)
    assert "BLOCK=1024" in k.source and "${" not in k.source
    with pytest.raises(ConfigError, match="no variant 'nope' of L1/01_softmax.*online_loop_b1024_w4"):
        zoo_kernel("L1/01_softmax", "nope")
    assert zoo_kernels("L9/not_a_problem") == []


def test_render():
    assert render("a=${x} b=${y} $$5", {"x": 3, "y": "two"}) == "a=3 b=two $5"
    with pytest.raises(ConfigError, match="no value for y"):
        render("${x}${y}", {"x": 1})
    with pytest.raises(ConfigError, match="does not use: z"):
        render("${x}", {"x": 1, "z": 2})
    with pytest.raises(ConfigError, match="integers or strings: x"):
        render("${x}", {"x": 1.5})
    with pytest.raises(ConfigError, match="integers or strings: x"):
        render("${x}", {"x": True})
    with pytest.raises(ConfigError, match=r"write '\$\$'"):
        render("cost $ 5 ${x}", {"x": 1})


@pytest.fixture()
def tmp_zoo(tmp_path, monkeypatch):
    d = tmp_path / "level1" / "01_softmax"
    d.mkdir(parents=True)
    monkeypatch.setattr(zoo, "ZOO_DIR", tmp_path)
    return d


def test_a_tmp_zoo_renders_files_and_rows(tmp_zoo):
    (tmp_zoo / "plain.py").write_text('"""Plain."""\n')
    (tmp_zoo / "t.py.tmpl").write_text('"""${doc}"""\nB = ${B}\n')
    (tmp_zoo / "variants.toml").write_text('[t_b8]\ntemplate = "t"\nB = 8\ndoc = "eight"\n\n'
                                           '[t_b16]\ntemplate = "t"\nB = 16\ndoc = """sixteen\nrows"""\n')
    ks = zoo_kernels("L1/01_softmax")
    assert [(k.variant, k.source) for k in ks] == [
        ("plain", '"""Plain."""\n'), ("t_b16", '"""sixteen\nrows"""\nB = 16\n'), ("t_b8", '"""eight"""\nB = 8\n')]
    assert [k.name for k in ks][0] == "L1/01_softmax/plain"


@pytest.mark.parametrize("table, files, match", [
    ('[v]\ntemplate = "missing"\n', {}, r"variants.toml \[v\]: no template missing.py.tmpl"),
    ('[v]\nB = 1\n', {}, r"\[v\]: needs template ="),
    ('[v]\ntemplate = "t"\n', {"t.py.tmpl": "${B}"}, r"\[v\]: no value for B"),
    ('[v]\ntemplate = "t"\nB = 1\nC = 2\n', {"t.py.tmpl": "${B}"}, r"\[v\]: values the template does not use: C"),
    ('[v]\ntemplate = "t"\nB = [1]\n', {"t.py.tmpl": "${B}"}, r"\[v\]: values must be integers or strings: B"),
    ('[v]\ntemplate = "t"\nB = 1\n', {"t.py.tmpl": "${B}", "v.py": "x"}, r"v.py exists too"),
    ('[v\ntemplate = "t"\n', {}, r"variants.toml: "),
])
def test_a_malformed_table_names_the_place(tmp_zoo, table, files, match):
    (tmp_zoo / "variants.toml").write_text(table)
    for name, text in files.items():
        (tmp_zoo / name).write_text(text)
    with pytest.raises(ConfigError, match=match):
        zoo_kernels("L1/01_softmax")


def test_cli_lists_and_prints_variants(capsys):
    assert main(["problems", "zoo", "softmax"]) == 0
    out = capsys.readouterr().out
    assert "online_loop_b1024_w4" in out and "BLOCK=1024, num_warps=4" in out and "one_pass_row" in out
    assert main(["problems", "zoo", "softmax", "slow_loop_b64_w1"]) == 0
    assert capsys.readouterr().out == zoo_kernel("L1/01_softmax", "slow_loop_b64_w1").source
    assert main(["problems", "zoo", "softmax", "nope"]) == 1
    assert "no variant 'nope'" in capsys.readouterr().err
