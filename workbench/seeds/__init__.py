"""Seeds for any problem, by construction, in three kinds (the `kind` of a seed is in its origin):

- `inductor` (`inductor.py`, needs a CUDA GPU to make): PyTorch Inductor's generated Triton for
  the reference, rewritten into a self-contained answer; torch.compile's own level;
- `family` (`workbench.search.lowering`): the reference's traced graph with the parts the
  project's kernel-family templates cover (elementwise runs, matmuls with fused epilogues,
  reductions, softmax, norms) lowered to Triton, the rest in PyTorch as traced;
- `generic` (`generic.py`): the reference's own code with every op the embedded Triton library
  implements (convolutions, pooling, scans, losses, recurrent layers and everything above)
  routed to it; size-generic by construction, the last resort that covers the rest.

`seeds_for(problem)` returns them in that order, each distinct source once, every one checked by
the executor's static guard (a seed the guard would flag is dropped, never emitted). Which seed
a search starts from is decided by measurement: a search measures its seeds first and expands
the fastest correct one (`workbench.search.generators.ZooGenerator`, which records each seed's
kind in the search's `generated` events; `seed_kind`, `started_from`).
"""
from __future__ import annotations

from typing import Iterable, Sequence

from workbench.records import Candidate, Problem

SEED_KINDS = ("inductor", "family", "generic")
_PREFIX = "seed:"


def seed_kind(origin: str) -> str | None:
    """The seed kind an origin names: "seed:inductor" and "seed:generic"; "lowering:<kinds>" (the
    family lowering) -> "family"; "zoo" for hand-written zoo kernels; None for anything else (a
    mutation, an LLM answer)."""
    if origin.startswith(_PREFIX):
        kind = origin[len(_PREFIX):].split(":", 1)[0]
        return kind if kind in SEED_KINDS else None
    if origin.startswith("lowering:"):
        return "family"
    if origin.startswith("zoo"):
        return "zoo"
    return None


def _guarded(problem: Problem, source: str | None) -> bool:
    from workbench.execution.guards import static_findings

    return bool(source) and not static_findings(source, problem.source)


def seeds_for(problem: Problem, inductor_source: str | None = None, family_variants: bool = True,
              tf32: bool = False) -> list[Candidate]:
    """The seeds of `problem`, in the order inductor, family (all family kinds, then each alone
    with `family_variants`), generic; distinct sources only, none the static guard flags.
    `inductor_source`: a rewritten Inductor seed made on a GPU (`inductor.seed_for`), if any;
    `tf32`: family matmuls may use TF32 (a run whose tolerance admits it)."""
    from workbench.search.lowering import FAMILIES, lower
    from workbench.seeds.generic import generic_source

    out: list[Candidate] = []
    seen: set[str] = set()

    def add(source: str | None, origin: str) -> None:
        if not _guarded(problem, source):
            return
        c = Candidate.from_source(problem.id, source, origin=origin)
        if c.id not in seen:
            seen.add(c.id)
            out.append(c)

    add(inductor_source, "seed:inductor")
    variants: list[Sequence[str]] = [FAMILIES]
    if family_variants:
        variants += [(f,) for f in FAMILIES]
    for fams in variants[:1]:
        add(lower(problem, fams, tf32=tf32), "lowering:" + "+".join(fams))
    add(generic_source(problem), "seed:generic")
    for fams in variants[1:]:
        add(lower(problem, fams, tf32=tf32), "lowering:" + "+".join(fams))
    return out


def started_from(candidates: Iterable[Candidate], best_id: str | None) -> str | None:
    """The seed kind at the root of `best_id`'s lineage (None when unknown)."""
    by_id = {c.id: c for c in candidates}
    cur = by_id.get(best_id or "")
    for _ in range(10_000):
        if cur is None:
            return None
        if not cur.parent_id or cur.parent_id not in by_id:
            return seed_kind(cur.origin)
        cur = by_id[cur.parent_id]
    return None


__all__ = ["SEED_KINDS", "seed_kind", "seeds_for", "started_from"]
