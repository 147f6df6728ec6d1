"""`workbench problems list|show|zoo|seeds|import`."""
from __future__ import annotations

import sys

from workbench.commands.common import add_contract_options, contract_from_args, db_path, table
from workbench.problems import load_dir
from workbench.problems.registry import add_problem_file_option, all_problems, open_store, problem_from_args


def register(sub) -> None:
    p = sub.add_parser("problems", help="list, show and import problems (KernelBench contract)",
                       description="Browse the built-in problem library or import a directory "
                       "in the KernelBench layout (levelN/NN_Name.py).")
    ps = p.add_subparsers(dest="action", metavar="ACTION", required=True)

    ls = ps.add_parser("list", help="list problems (built-in and imported into --db) with level, "
                       "category, dtype, FLOPs, bytes and where the counts came from")
    ls.add_argument("--level", type=int, help="only this level (1, 2 or 3)")
    ls.add_argument("--tag", help="only problems with this category, tag or dtype")
    ls.set_defaults(handler=_list)

    sh = ps.add_parser("show", help="print one problem's metadata, the contract it is judged by, and its source",
                       description="Prints the problem's counts, its CPU sizes, and the contract a run with "
                       "the same --precision / --tolerance / --trials judges candidates by.")
    sh.add_argument("problem", nargs="?", help="id (L1/01_softmax, L1/19_ReLU), KernelBench path "
                    "(level1/19_ReLU.py) or name (01_softmax or softmax); or give --problem-file")
    add_problem_file_option(sh)
    add_contract_options(sh)
    sh.set_defaults(handler=_show)

    zo = ps.add_parser("zoo", help="list a problem's zoo variants, or print one variant's source",
                       description="The zoo's hand-written kernels of a problem: each variant with its "
                       "template and values, or, given VARIANT, its rendered source (a candidate file "
                       "for `workbench measure` or `workbench forecast`).")
    zo.add_argument("problem", help="id (L1/01_softmax) or name (softmax)")
    zo.add_argument("variant", nargs="?", help="print this variant's source")
    zo.set_defaults(handler=_zoo)

    se = ps.add_parser("seeds", help="list the seeds a search of a problem starts from, or write them as files",
                       description="The seeds `workbench search` measures first when the zoo has no kernel of the "
                       "problem: the reference lowered to the kernel families and the generic seed (Inductor's "
                       "seed needs a GPU: benchmarks/kb_bench.py makes it). Each is a candidate file for "
                       "`workbench measure`.")
    se.add_argument("problem", nargs="?", help="id (L1/19_ReLU), KernelBench path or name; or give --problem-file")
    add_problem_file_option(se)
    se.add_argument("--out", help="write each seed to DIR/<kind>_<n>.py")
    se.set_defaults(handler=_seeds)

    im = ps.add_parser("import", help="import a KernelBench-layout directory into the database",
                       description="Loads every levelN/*.py under PATH; a bad file is reported "
                       "with what is wrong and the others still load.")
    im.add_argument("path", help="directory holding level1/, level2/, ...")
    im.set_defaults(handler=_import)


def _list(args) -> int:
    store = open_store(getattr(args, "db", None))
    try:
        probs = all_problems(store)
    finally:
        if store is not None:
            store.close()
    if args.level is not None:
        probs = [p for p in probs if p.level == args.level]
    if args.tag is not None:
        probs = [p for p in probs if args.tag in (p.category, p.dtype) or args.tag in p.tags]
    rows = [{"id": p.id, "level": p.level, "category": p.category, "dtype": p.dtype,
             "GFLOP": f"{p.flops / 1e9:.3g}", "MB": f"{p.bytes_moved / 1e6:.3g}",
             "counts": p.count_source, "origin": "builtin" if p.origin == "builtin" else "imported"}
            for p in probs]
    print(table(rows, ["id", "level", "category", "dtype", "GFLOP", "MB", "counts", "origin"]))
    levels = sorted({p.level for p in probs})
    print(f"\n{len(probs)} problems over levels {', '.join(map(str, levels))}")
    return 0


def _show(args) -> int:
    p = problem_from_args(args, args.problem)
    print(f"id:        {p.id}\nlevel:     {p.level}\ncategory:  {p.category}\ndtype:     {p.dtype}")
    print(f"tags:      {', '.join(p.tags)}\nGFLOP:     {p.flops / 1e9:.4g}\nMB moved:  {p.bytes_moved / 1e6:.4g}")
    print(f"counts:    {p.count_source}\norigin:    {p.origin}")
    from workbench.problems import load_source
    from workbench.problems.cpu_sizes import describe

    cpu = load_source(p.source, name=p.id, cpu=True)
    how = {"file": "the file's CPU_SIZES", "auto": "chosen automatically; set CPU_SIZES in the "
           "file to override"}.get(cpu.cpu_sizes_source, "full size")
    print(f"CPU sizes: {describe(cpu.cpu_sizes)} ({how})")
    print(f"contract:  {contract_from_args(args).describe()}")
    print(f"\n{p.description}\n\n{p.source}")
    return 0


def _zoo(args) -> int:
    from workbench.zoo import zoo_kernel, zoo_kernels

    p = problem_from_args(args, args.problem)
    if args.variant:
        sys.stdout.write(zoo_kernel(p.id, args.variant).source)
        return 0
    ks = zoo_kernels(p.id)
    if not ks:
        print(f"the zoo has no kernel of {p.id}")
        return 0
    rows = [{"variant": k.variant, "backend": k.backend, "template": k.template or "-",
             "values": ", ".join(f"{n}={v}" for n, v in k.params.items() if isinstance(v, int)) or "-"}
            for k in ks]
    print(table(rows, ["variant", "backend", "template", "values"]))
    print(f"\n{len(ks)} variants of {p.id}; `workbench problems zoo {p.id} VARIANT` prints one")
    return 0


def _seeds(args) -> int:
    from pathlib import Path

    from workbench.seeds import seed_kind, seeds_for

    p = problem_from_args(args, args.problem)
    seeds = seeds_for(p)
    if not seeds:
        print(f"no seed for {p.id}: its reference neither builds on the meta device nor traces", file=sys.stderr)
        return 1
    rows = []
    for i, c in enumerate(seeds):
        kernels = c.source.count("@triton.jit")
        path = ""
        if args.out:
            out = Path(args.out)
            out.mkdir(parents=True, exist_ok=True)
            path = str(out / f"{seed_kind(c.origin)}_{i}.py")
            Path(path).write_text(c.source)
        rows.append({"kind": seed_kind(c.origin), "origin": c.origin, "kernels": kernels, "id": c.id,
                     **({"file": path} if path else {})})
    print(table(rows, ["kind", "origin", "kernels", "id"] + (["file"] if args.out else [])))
    print(f"\n{len(seeds)} seeds of {p.id}; a search measures them first and starts from the fastest correct one")
    return 0


def _import(args) -> int:
    def report(err):
        print(f"skipped: {err}", file=sys.stderr)

    problems, errors = load_dir(args.path, on_error=report)
    from workbench.store import Store

    with Store(db_path(args)) as store:
        for p in problems:
            store.put_problem(p)
    print(f"imported {len(problems)} problems into {db_path(args)}; {len(errors)} file(s) skipped")
    return 0 if problems else 1
