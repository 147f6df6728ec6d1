"""The kernel zoo: hand-written candidates in the KernelBench answer form, as templates and
parameter tables.

Layout, per problem, in `workbench/zoo/level{N}/{problem stem}/`:

- `{variant}.py`: a kernel that no other kernel of the problem shares its text with, as written;
- `{template}.py.tmpl`: the text a set of variants share, with `${name}` placeholders
  (`string.Template` syntax; `$$` is a literal `$`);
- `variants.toml`: one table per templated variant, `[variant]`, holding `template = "<template>"`
  and a value for each of the template's placeholders: an integer, or a string inserted verbatim.

Rendering is deterministic: a variant gives the same bytes every time, and its candidate id is
the content hash of that text, as for any candidate. A variant's name is unique within its
problem. Variants named `cuda_*` are CUDA C++ (`load_inline`) and need a GPU; every other is Triton.
A malformed table (unknown template, missing or unused value, a value that is neither an integer
nor a string, a variant defined twice) raises ConfigError naming the file and the variant.
"""
from __future__ import annotations

import string
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from workbench.errors import ConfigError
from workbench.records import Candidate

ZOO_DIR = Path(__file__).parent
TABLE = "variants.toml"
TEMPLATE_SUFFIX = ".py.tmpl"


@dataclass(frozen=True)
class ZooKernel:
    """One zoo variant: where it lives, its rendered source, and (when templated) its template's
    name and the values it was rendered with."""

    problem_id: str
    variant: str
    source: str
    template: str | None = None
    params: dict[str, int | str] = field(default_factory=dict, compare=False, hash=False)

    @property
    def backend(self) -> str:
        return "cuda" if self.variant.startswith("cuda_") else "triton"

    @property
    def name(self) -> str:
        """"<problem id>/<variant>", e.g. "L1/01_softmax/online_loop_b1024_w4"."""
        return f"{self.problem_id}/{self.variant}"

    @property
    def origin(self) -> str:
        return f"zoo:{self.variant}"

    def candidate(self) -> Candidate:
        return Candidate.from_source(self.problem_id, self.source, origin=self.origin)


def _problem_dirs(problem_id: str | None) -> list[Path]:
    if problem_id:
        level, stem = problem_id.split("/")
        d = ZOO_DIR / f"level{level[1:]}" / stem
        return [d] if d.is_dir() else []
    return sorted(d for d in ZOO_DIR.glob("level*/*") if d.is_dir() and not d.name.startswith("_"))


def _problem_id(d: Path) -> str:
    return f"L{d.parent.name[len('level'):]}/{d.name}"


def render(template_text: str, values: dict[str, int | str], where: str = "template") -> str:
    """The template's text with every placeholder replaced by its value (integers in decimal,
    strings verbatim); a missing or unused value, or a value of another type, is a ConfigError."""
    tmpl = string.Template(template_text)
    names = set(tmpl.get_identifiers())
    if not tmpl.is_valid():
        raise ConfigError(f"{where}: a '$' that is not a placeholder (write '$$' for a literal '$')")
    bad = sorted(k for k, v in values.items() if isinstance(v, bool) or not isinstance(v, (int, str)))
    if bad:
        raise ConfigError(f"{where}: values must be integers or strings: {', '.join(bad)}")
    missing, unused = sorted(names - set(values)), sorted(set(values) - names)
    if missing or unused:
        raise ConfigError(f"{where}: " + "; ".join(
            part for part in (f"no value for {', '.join(missing)}" if missing else "",
                              f"values the template does not use: {', '.join(unused)}" if unused else "") if part))
    return tmpl.substitute({k: str(v) for k, v in values.items()})


def _kernels_in(d: Path) -> list[ZooKernel]:
    pid = _problem_id(d)
    out = {f.stem: ZooKernel(pid, f.stem, f.read_text()) for f in d.glob("*.py") if not f.name.startswith("_")}
    table = d / TABLE
    if table.exists():
        try:
            rows = tomllib.loads(table.read_text())
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"{table}: {e}") from None
        texts: dict[str, str] = {}
        for variant, row in rows.items():
            where = f"{table} [{variant}]"
            if variant in out:
                raise ConfigError(f"{where}: {variant}.py exists too; a variant is a file or a table row, not both")
            if not isinstance(row, dict) or not isinstance(row.get("template"), str):
                raise ConfigError(f"{where}: needs template = \"<name of a {TEMPLATE_SUFFIX} file beside it>\"")
            values = {k: v for k, v in row.items() if k != "template"}
            name = row["template"]
            if name not in texts:
                path = d / f"{name}{TEMPLATE_SUFFIX}"
                if not path.exists():
                    raise ConfigError(f"{where}: no template {path.name} beside it")
                texts[name] = path.read_text()
            out[variant] = ZooKernel(pid, variant, render(texts[name], values, where), name, values)
    return [out[v] for v in sorted(out, key=lambda v: f"{v}.py")]


def zoo_kernels(problem_id: str | None = None) -> list[ZooKernel]:
    """Every zoo variant, or one problem's ("L1/01_softmax"), rendered; ordered by problem folder,
    then variant name."""
    return [k for d in _problem_dirs(problem_id) for k in _kernels_in(d)]


def zoo_kernel(problem_id: str, variant: str) -> ZooKernel:
    """One variant of a problem; ConfigError listing the problem's variants if there is none."""
    ks = zoo_kernels(problem_id)
    for k in ks:
        if k.variant == variant:
            return k
    names = ", ".join(k.variant for k in ks) or "none"
    raise ConfigError(f"the zoo has no variant {variant!r} of {problem_id} (it has: {names})")


def zoo_candidates(problem_id: str | None = None) -> list[Candidate]:
    """Candidates for the zoo variants, origin "zoo:<variant>"."""
    return [k.candidate() for k in zoo_kernels(problem_id)]
