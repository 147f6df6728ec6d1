"""Target strings (`replay:h100`, `cuda:0`, `cpu`, `ray:ADDRESS`) are parsed in one place,
`workbench/spec/target.py`; everything else asks `Target.parse` / `Target.local`."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from workbench.errors import ConfigError
from workbench.spec import Target, TargetError

ROOT = Path(__file__).resolve().parents[2]
HOME = ROOT / "workbench" / "spec" / "target.py"
#: String methods that take a target string apart.
STR_METHODS = {"startswith", "endswith", "removeprefix", "removesuffix", "split", "rsplit", "partition",
               "rpartition", "index", "find"}
#: A target prefix ("replay:", "cuda:", "ray:", "ray-cpu:") or the bare words replay / cuda.
TARGET_WORD = re.compile(r"^(replay|cuda|ray|ray-cpu):|^(replay|cuda)$")
#: An expression that holds a target or device string, e.g. `args.gpu`, `target`, `cfg["device"]`.
TARGET_NAME = re.compile(r"gpu|target|device", re.I)
#: The executors' own jobs carry the torch device they chose ("cuda" | "cpu"), not a string a
#: user typed; their `device.startswith("cuda")` tests are not target parsing.
TORCH_DEVICE_HOMES = (ROOT / "workbench" / "execution",)


def _constants(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Tuple):
        return [c for e in node.elts for c in _constants(e)]
    return []


def ad_hoc_target_parsing(path: Path) -> list[str]:
    """`file:line: source` of every call in `path` that takes a target string apart by hand:
    a string method given a target prefix (`gpu.startswith("replay:")`, `removeprefix("cuda:")`,
    `device.startswith("cuda")`), or `split(":")` / `partition(":")` of a gpu / target / device."""
    source = path.read_text()
    torch_home = any(path.is_relative_to(h) for h in TORCH_DEVICE_HOMES)
    out = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in STR_METHODS and node.args):
            continue
        words = _constants(node.args[0])
        receiver = ast.get_source_segment(source, node.func.value) or ""
        prefix = [w for w in words if TARGET_WORD.match(w) and not (torch_home and w == "cuda")]
        colon = ":" in words and bool(TARGET_NAME.search(receiver))
        if prefix or colon:
            out.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.get_source_segment(source, node)}")
    return out


def test_no_target_string_is_parsed_outside_target_py():
    files = [p for d in ("workbench", "benchmarks") for p in sorted((ROOT / d).rglob("*.py")) if p != HOME]
    found = [hit for p in files for hit in ad_hoc_target_parsing(p)]
    assert not found, "parse target strings with workbench.spec.Target, not by hand:\n" + "\n".join(found)


def test_the_check_flags_the_hand_parsing_it_is_for(tmp_path, monkeypatch):
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    bad = tmp_path / "bad.py"
    bad.write_text('a = gpu.startswith("replay:")\nb = t.removeprefix("cuda:")\nc = device.startswith("cuda")\n'
                   'd = args.gpu.split(":", 1)[1]\ne = s.startswith(("cpu", "ray:"))\n')
    assert sorted(h.split(":")[1] for h in ad_hoc_target_parsing(bad)) == ["1", "2", "3", "4", "5"]
    fine = tmp_path / "fine.py"
    fine.write_text('a = spec.split(":")\nb = origin.split(":")[1]\nc = label.startswith("ray")\n'
                    'd = name.startswith("cuda_")\ne = v.startswith("auto:")\n')
    assert ad_hoc_target_parsing(fine) == []


def test_bare_index_and_local_targets():
    assert Target.parse("1", bare_index=True) == Target("cuda", index=1)
    with pytest.raises(TargetError, match="not understood"):
        Target.parse("1")  # only where a bare index is one of the accepted forms
    assert Target.local("cuda:2") == Target("cuda", index=2) and Target.local("cpu") == Target("cpu")
    for text in ("replay:h100", "ray", "ray-cpu:auto", "tpu", "1"):
        with pytest.raises(ConfigError, match="--device .* is not a device of this machine"):
            Target.local(text, what="--device")
    assert [Target.parse(t).cuda for t in ("cuda:1", "cpu", "ray", "ray-cpu", "replay:h100")] == \
        [True, False, True, False, False]
