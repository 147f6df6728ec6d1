"""`workbench dataset stats|export-hf|import-study|load-shipped|export-shipped`."""
from __future__ import annotations

import argparse
import json

from workbench.commands.common import db_path, table
from workbench.store import Store


def register(sub) -> None:
    p = sub.add_parser("dataset", help="dataset statistics, shipped data, Hugging Face export, "
                       "study imports",
                       description="Work with measurement datasets: count them, load the data "
                       "shipped in kernels_cache/shipped/, export to the Hugging Face datasets "
                       "layout, and import the GPU Forecasters study's public datasets. Every "
                       "bin is recomputed from the measured speedup with workbench.bins.")
    ps = p.add_subparsers(dest="action", metavar="ACTION", required=True)

    st = ps.add_parser("stats", help="counts per problem, status, bin and GPU",
                       description="Counts of measurements in the database (or in a shipped "
                       "directory with --source) per problem, status, speedup bin and GPU.")
    st.add_argument("--gpu", help="only measurements on this GPU key (h100, h200, a100, cpu, ...)")
    st.add_argument("--source", help="read this shipped-layout directory instead of the database")
    st.add_argument("--json", action="store_true", help="print the counts as JSON")
    st.set_defaults(handler=_stats)

    hf = ps.add_parser("export-hf", help="write DIR/data/<split>-00000-of-00001.parquet + README.md",
                       description="Export the database's measurements in the Hugging Face "
                       "datasets Parquet layout with a dataset card; load it back with "
                       "datasets.load_dataset(DIR) or push DIR to the Hub.")
    hf.add_argument("dir", help="output directory (created if missing)")
    hf.add_argument("--split", default="train", help="split name (default: train)")
    hf.add_argument("--gpu", help="only measurements on this GPU key")
    hf.add_argument("--ok-only", action="store_true",
                    help="only rows with a measured speedup (drop failed candidates)")
    hf.set_defaults(handler=_export_hf)

    im = ps.add_parser("import-study", help="import a GPU Forecasters study dataset",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       description="Import one of the study's public datasets from a local "
                       ".parquet/.jsonl file or directory, or from the Hub by name (needs the "
                       "`datasets` package and network).\n\n"
                       "  workbench dataset import-study eval.parquet --kind eval-set\n"
                       "  workbench dataset import-study codezakh/gpu-forecasters-eval-set-predictions \\\n"
                       "      --kind eval-set-predictions --eval-set eval.parquet\n\n"
                       "Stored bin labels are ignored: bins are recomputed from the speedup; "
                       "--bin-convention says which edges the disagreement count uses.")
    im.add_argument("source", metavar="NAME_OR_PATH", help="local file/directory or Hub dataset name")
    im.add_argument("--kind", required=True,
                    choices=["eval-set", "rl-training-pool", "discovery-pairs", "eval-set-predictions"],
                    help="which study dataset the rows come from")
    im.add_argument("--eval-set", metavar="NAME_OR_PATH",
                    help="for --kind eval-set-predictions: the eval set to join with "
                    "(default: the Hub's codezakh/gpu-forecasters-eval-set)")
    im.add_argument("--bin-convention", choices=["prompt-table", "study-code"],
                    default="prompt-table",
                    help="edges the stored labels are checked against: the table the study's "
                    "prompts show (default; workbench/bins.py) or its code's "
                    "floor(2 log2 S) + 4 formula")
    im.add_argument("--dry-run", action="store_true", help="map and count rows, write nothing")
    im.set_defaults(handler=_import_study)

    ls = ps.add_parser("load-shipped", help="load kernels_cache/shipped/ measurements into the database",
                       description="Upsert the shipped measurement data (problems.parquet + "
                       "kernels.parquet) into the database; loading twice changes nothing.")
    ls.add_argument("dir", nargs="?", help="shipped-layout directory (default: kernels_cache/shipped)")
    ls.set_defaults(handler=_load_shipped)

    ex = ps.add_parser("export-shipped", help="write the database's measurements in the shipped layout",
                       description="Write problems.parquet and kernels.parquet (zstd) as described "
                       "in workbench/dataset/SCHEMA.md.")
    ex.add_argument("dir", nargs="?", help="output directory (default: kernels_cache/shipped)")
    ex.add_argument("--gpu", help="only measurements on this GPU key")
    ex.set_defaults(handler=_export_shipped)


def _stats(args) -> int:
    from workbench.dataset import stats

    if args.source:
        st = stats(args.source, hardware_key=args.gpu)
    else:
        with Store(db_path(args)) as s:
            st = stats(s, hardware_key=args.gpu)
    if args.json:
        print(json.dumps(st.to_dict(), indent=2))
        return 0
    print(f"{st.measurements} measurements of {st.candidates} candidates over {st.problems} problems"
          + (f" on {args.gpu}" if args.gpu else ""))
    for title, counts in (("GPU", st.by_gpu), ("status", st.by_status), ("bin (ok only)", st.by_bin),
                          ("problem", st.by_problem)):
        print()
        print(table([{title: k, "count": v} for k, v in counts.items()], [title, "count"]))
    return 0


def _export_hf(args) -> int:
    from workbench.dataset import export_hf

    with Store(db_path(args)) as s:
        out = export_hf(s, args.dir, split=args.split, hardware_key=args.gpu, ok_only=args.ok_only)
    print(f"wrote {out['rows']} rows to {out['path']} and a dataset card to {args.dir}/README.md")
    return 0


def _import_study(args) -> int:
    from workbench.dataset import import_study

    if args.dry_run:
        res = import_study(args.source, args.kind, None, eval_set=args.eval_set, progress=True,
                           bin_convention=args.bin_convention)
        print(res.summary() + " (dry run: nothing written)")
        return 0
    with Store(db_path(args)) as s:
        res = import_study(args.source, args.kind, s, eval_set=args.eval_set, progress=True,
                           bin_convention=args.bin_convention)
    print(res.summary() + f"; written to {db_path(args)}")
    return 0


def _load_shipped(args) -> int:
    from workbench.dataset import load_into_store

    with Store(db_path(args)) as s:
        counts = load_into_store(args.dir, s, progress=True)
    print("loaded " + ", ".join(f"{n} {k}" for k, n in counts.items()) + f" into {db_path(args)}")
    return 0


def _export_shipped(args) -> int:
    from workbench.dataset import DEFAULT_SHIPPED_DIR, write_shipped

    d = args.dir or DEFAULT_SHIPPED_DIR
    with Store(db_path(args)) as s:
        counts = write_shipped(s, d, hardware_key=args.gpu)
    print(f"wrote {counts['problems']} problems and {counts['kernels']} kernel rows to {d}"
          + (f" ({counts['skipped']} measurements without a stored candidate skipped)"
             if counts["skipped"] else ""))
    return 0
