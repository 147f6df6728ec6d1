"""One registry of problems: the built-in library, the database's imported problems, and a
single file given by path are the same kind of thing to every command.

    all_problems(store)                     # built-in, then the database's others, by id
    resolve("L1/19_ReLU", store=store)      # an id ...
    resolve("19_ReLU", store=store)         # ... a file stem (KernelBench name) ...
    resolve("level1/19_ReLU.py")            # ... a KernelBench path ...
    resolve("ReLU")                         # ... or a unique name without its number
    resolve(problem_file="/tmp/mine/my_op.py")

A file given by path gets the id `L{N}/{stem}` when it sits in a `levelN/` folder, else
`L0/{stem}`; it is loaded exactly as `workbench problems import` loads it (counts declared or
derived). Database records from before derived counts (counts 0, no source) get their counts
derived when they are resolved.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from workbench.errors import ProblemFileError
from workbench.problems.loader import builtin_problems, file_counts, load_file, load_source
from workbench.records import Problem

_KB_PATH = re.compile(r"^(?:.*/)?level(\d+)/([^/]+?)(?:\.py)?$", re.IGNORECASE)
_ID = re.compile(r"^L(\d+)/([^/]+?)(?:\.py)?$", re.IGNORECASE)


def open_store(db: str | Path | None, create: bool = False):
    """The Store at `db` (default $WORKBENCH_DB, else ./workbench.sqlite), or None when that
    file does not exist and `create` is False (listing problems never creates a database)."""
    path = Path(db or os.environ.get("WORKBENCH_DB") or "workbench.sqlite")
    if not create and not path.exists():
        return None
    from workbench.store import Store

    return Store(path)


def _with_counts(p: Problem) -> Problem:
    """A database record from before derived counts, given them (others unchanged)."""
    if p.counts_source or p.flops > 0 or p.bytes_moved > 0 or not p.source.strip():
        return p
    try:
        flops, nbytes, source = file_counts(load_source(p.source, name=p.id))
    except ProblemFileError:
        return p
    return p.replace(flops=flops, bytes_moved=nbytes, counts_source=source)


def all_problems(store: Any = None) -> list[Problem]:
    """Built-in problems, then the database's problems whose ids are not built-in (sorted by
    level and id)."""
    out = list(builtin_problems())
    if store is not None:
        ids = {p.id for p in out}
        extra = [_with_counts(p) for p in store.problems() if p.id not in ids]
        out += sorted(extra, key=lambda p: (p.level, p.id))
    return out


def load_problem_file(path: str | Path) -> Problem:
    """A single problem file as a Problem (see module doc for its id). ProblemFileError when
    it is missing or breaks the contract."""
    f = Path(path)
    if not f.is_file():
        raise ProblemFileError(f"problem file {f} does not exist; pass the path of a .py file "
                               "defining class Model, get_inputs and get_init_inputs")
    return load_file(f, origin=f"file:{f.resolve()}")


def _normal(ref: str) -> str:
    """An id from a KernelBench-style path or id spelling, else `ref` itself."""
    ref = ref.strip()
    m = _KB_PATH.match(ref) or _ID.match(ref)
    if m:
        return f"L{int(m.group(1))}/{m.group(2)}"
    return ref


def resolve(ref: str | None = None, problem_file: str | Path | None = None,
            store: Any = None) -> Problem:
    """The problem named by `ref` (id, KernelBench path, file stem or unique name; built-in
    and database problems alike) or loaded from `problem_file`. Raises ProblemFileError naming
    the choices when the reference is unknown or ambiguous."""
    if problem_file is not None:
        p = load_problem_file(problem_file)
        if ref and _normal(ref) not in (p.id, p.name):
            raise ProblemFileError(f"--problem-file {problem_file} is problem {p.id}, not {ref!r}; "
                                   "pass one of the two")
        return p
    if not ref:
        raise ProblemFileError("no problem named; pass a problem id (`workbench problems list` "
                               "shows them) or --problem-file PATH")
    probs = all_problems(store)
    want = _normal(ref)
    for p in probs:
        if p.id == want:
            return p
    for key in (lambda p: p.id.lower() == want.lower(),
                lambda p: p.name == want,
                lambda p: p.name.split("_", 1)[-1] == want,
                lambda p: p.name.lower() == want.lower() or p.name.split("_", 1)[-1].lower() == want.lower()):
        matches = [p for p in probs if key(p)]
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise ProblemFileError(f"{ref!r} is ambiguous: {', '.join(p.id for p in matches)}; "
                                   "pass the id")
    where = "the built-in library" + (" or the database" if store is not None else
                                      " (no database found: imported problems live there; --db PATH)")
    raise ProblemFileError(f"no problem {ref!r} in {where}; `workbench problems list` shows the "
                           "ids, and --problem-file PATH loads a file directly")


def add_problem_file_option(p) -> None:
    """`--problem-file PATH` (every command that takes a problem has it)."""
    p.add_argument("--problem-file", metavar="PATH",
                   help="a problem file (KernelBench contract: Model, get_inputs, get_init_inputs) "
                   "to use instead of a library or imported problem")


def problem_from_args(args, ref: str | None = None, store: Any = None) -> Problem:
    """The problem of parsed CLI arguments: `--problem-file`, else `ref` looked up in the
    built-in library and the database of `--db` (opened here when `store` is not given)."""
    pf = getattr(args, "problem_file", None)
    if pf is not None or store is not None:
        return resolve(ref, problem_file=pf, store=store)
    st = open_store(getattr(args, "db", None))
    try:
        return resolve(ref, store=st)
    finally:
        if st is not None:
            st.close()
