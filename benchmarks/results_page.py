"""Write docs/results.md from benchmarks/results/*.json, so that no result is copied by hand.

    python benchmarks/results_page.py            # rewrite docs/results.md
    python benchmarks/results_page.py --check    # exit 1 if docs/results.md is out of date

Contract:
- The page is a pure function of the JSON files (read in file-name order) and of this script: no
  clock, no machine state. Regenerating from the committed files gives the committed page byte
  for byte (`tests/test_results_page.py`).
- Each file gets a section: its provenance (`benchmark`, `gpu`, `date`, `commit`, shown as
  written, "not recorded" when absent), its free-text notes, its `metrics`, its `definitions`,
  then the rest of the file ("run details").
- Layout is generic, so a results file may change the shape of its `metrics` without touching
  this script. Leaves (numbers, strings, booleans, null, short lists of those) go in key/value
  tables; sibling dicts with mostly the same keys become one table (one row per sibling,
  transposed when it would be wider than tall); nested dicts are flattened to dotted keys or given
  a sub-heading. In the run details, many similar siblings too wide for that (per-problem rows)
  share one table of their own short leaves, a value common to every row said once above it and
  the keys left to the JSON named below it. A dict of scalars holding `mean` and `sd` (a summary
  over seeds) is shown as one cell, "mean ± sd (min to max)". Lists of dicts (recorded runs,
  calls) and long lists are counted, not shown: the JSON holds them.
- Floats show four significant digits (no exponent between 1e-4 and 1e6); nothing is rounded in
  the JSON itself.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from workbench.errors import WorkbenchError  # noqa: E402
RESULTS = ROOT / "benchmarks" / "results"
PAGE = ROOT / "docs" / "results.md"

#: Top-level keys shown as provenance, in this order.
PROVENANCE = ("benchmark", "gpu", "date", "commit")
#: Top-level keys rendered in their own places (not under "run details").
SPECIAL = (*PROVENANCE, "metrics", "definitions")
#: A list of scalars longer than this is counted, not shown.
MAX_LIST = 12
#: A string longer than this is shown as a paragraph below its table, not in a cell.
MAX_CELL_TEXT = 100
#: A lone nested dict with at most this many leaves is merged into its parent's key/value table.
MAX_MERGE = 12
#: Sibling dicts flattened to more columns than this get one sub-heading each instead of a table.
MAX_COLUMNS = 30
#: At least this many similar sibling dicts too wide for one table (per-problem rows) get one table
#: of their own leaves instead of a sub-heading each; see _Writer.leaf_table.
MANY = 8
#: Dicts nested deeper than this heading level are counted, not shown.
MAX_LEVEL = 6
#: Sibling dicts share a table when their `_shape`s overlap at least this much (Jaccard index).
SIMILAR = 0.5


class ResultsPageError(WorkbenchError):
    """A results file cannot be read as a results record; the message names the file and the fix."""


Leaf = Any  # a scalar, a list of scalars, or a summary dict: what fits in one table cell


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


def _is_summary(value: Any) -> bool:
    return (isinstance(value, dict) and "mean" in value and "sd" in value
            and all(_is_scalar(v) or _is_scalar_list(v) for v in value.values()))


def _is_scalar_list(value: Any) -> bool:
    return isinstance(value, list) and all(_is_scalar(v) for v in value)


def _is_leaf(value: Any) -> bool:
    return _is_scalar(value) or _is_scalar_list(value) or _is_summary(value)


def fmt_number(value: float | int) -> str:
    """A number as a table shows it: ints whole, floats to four significant digits."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value == 0:
        return "0"
    if 1e-4 <= abs(value) < 1e6:
        digits = max(0, 3 - math.floor(math.log10(abs(value))))
        text = f"{value:.{digits}f}"
        return text.rstrip("0").rstrip(".") if "." in text else text
    return f"{value:.4g}"


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("\r", " ")


def fmt_leaf(value: Leaf) -> str:
    """One cell's text."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return _escape(value)
    if isinstance(value, (bool, int, float)):
        return fmt_number(value)
    if isinstance(value, list):
        if len(value) > MAX_LIST:
            return f"{len(value)} values (in the JSON)"
        return "[" + ", ".join(fmt_leaf(v) for v in value) + "]"
    if _is_summary(value):
        text = f"{fmt_leaf(value['mean'])} ± {fmt_leaf(value['sd'])}"
        if "min" in value and "max" in value:
            text += f" ({fmt_leaf(value['min'])} to {fmt_leaf(value['max'])})"
        return text
    raise TypeError(f"not a table cell: {type(value).__name__}")


def flatten(value: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Dotted keys to leaves; lists of dicts stay as they are (counted when shown)."""
    out: dict[str, Any] = {}
    for key, item in value.items():
        name = f"{prefix}{key}"
        if isinstance(item, dict) and not _is_summary(item) and item:
            out.update(flatten(item, name + "."))
        else:
            out[name] = item
    return out


def _cell(value: Any) -> str:
    if _is_leaf(value):
        return fmt_leaf(value)
    if isinstance(value, list):
        return f"{len(value)} entries (in the JSON)"
    if isinstance(value, dict):
        return "{}" if not value else f"{len(value)} keys (in the JSON)"
    return _escape(repr(value))


def _code(key: str) -> str:
    return f"`{key}`" if "`" not in key else _escape(key)


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, *lines: str) -> None:
        self.lines.extend(lines)

    def heading(self, level: int, text: str) -> None:
        self.add("#" * level + " " + text, "")

    def key_values(self, items: dict[str, Any]) -> None:
        short = {k: v for k, v in items.items()
                 if not (isinstance(v, str) and len(v) > MAX_CELL_TEXT)}
        long = {k: v for k, v in items.items() if k not in short}
        if short:
            self.add("| key | value |", "|---|---|")
            for key, value in short.items():
                self.add(f"| {_code(key)} | {_cell(value)} |")
            self.add("")
        for key, value in long.items():
            self.add(f"- {_code(key)}: {_escape(value)}")
        if long:
            self.add("")

    def table(self, rows: dict[str, dict[str, Any]]) -> None:
        columns: list[str] = []
        for row in rows.values():
            columns.extend(c for c in row if c not in columns)
        if len(columns) > len(rows) and len(columns) > 8:
            self._grid("", columns, list(rows),
                       lambda col, row: rows[row].get(col, ...))
        else:
            self._grid("", list(rows), columns,
                       lambda row, col: rows[row].get(col, ...))

    def leaf_table(self, rows: dict[str, dict[str, Any]]) -> None:
        """Many similar rows too wide to flatten: a table of the rows' own leaves (not their nested
        dicts, not text longer than MAX_CELL_TEXT, not a column that repeats the row's key), at
        most MAX_COLUMNS columns; a column with one value in every row is said once above the
        table, and the keys left out are named below it."""
        columns: list[str] = []
        for row in rows.values():
            columns.extend(c for c in row if c not in columns)

        def shown(col: str) -> bool:
            values = [row[col] for row in rows.values() if col in row]
            return (all(_is_leaf(v) and not (isinstance(v, str) and len(v) > MAX_CELL_TEXT) for v in values)
                    and not all(row.get(col) == key for key, row in rows.items()))

        leaf = [c for c in columns if shown(c)]
        first = next(iter(rows.values()))
        same = [c for c in leaf if all(c in row and row[c] == first[c] for row in rows.values())]
        table = [c for c in leaf if c not in same][:MAX_COLUMNS]
        if same:
            self.add("In every row: " + ", ".join(f"{_code(c)} {_cell(first[c])}" for c in same) + ".", "")
        self._grid("", list(rows), table, lambda row, col: rows[row].get(col, ...))
        left = [c for c in columns if c not in table and c not in same]
        if left:
            self.add("Not in the table (in the JSON): " + ", ".join(_code(c) for c in left) + ".", "")

    def _grid(self, corner: str, row_keys: list[str], col_keys: list[str], get: Any) -> None:
        self.add("| " + " | ".join([corner] + [_code(c) for c in col_keys]) + " |",
                 "|" + "---|" * (len(col_keys) + 1))
        for r in row_keys:
            cells = []
            for c in col_keys:
                value = get(r, c)
                cells.append("" if value is ... else _cell(value))
            self.add("| " + " | ".join([_code(r)] + cells) + " |")
        self.add("")


def _shape(value: dict[str, Any]) -> set[str]:
    """Keys, each marked leaf or nested: siblings share a table only when their keys mostly match
    and hold the same kind of thing."""
    return {f"{key}:{_is_leaf(item)}" for key, item in value.items()}


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


def render_dict(out: _Writer, path: str, value: dict[str, Any], level: int, compact: bool = False) -> None:
    """Render one dict: leaves in a key/value table, similar sibling dicts as one table, the rest
    under sub-headings named by their dotted path. With `compact` (run details, not metrics), at
    least MANY similar siblings too wide for a table share one table of their leaves instead."""
    leaves: dict[str, Any] = {}
    groups: list[list[tuple[str, dict[str, Any]]]] = []
    for key, item in value.items():
        if _is_leaf(item) or (isinstance(item, list) and item) or item == {} or item == []:
            leaves[key] = item
            continue
        if not isinstance(item, dict):
            leaves[key] = item
            continue
        keys = _shape(item)
        for group in groups:
            if _jaccard(keys, _shape(group[0][1])) >= SIMILAR:
                group.append((key, item))
                break
        else:
            groups.append([(key, item)])
    nested: list[tuple[str, dict[str, Any]]] = []
    tables: list[dict[str, dict[str, Any]]] = []
    many: list[dict[str, dict[str, Any]]] = []
    for group in groups:
        width = len({k for _, item in group for k in flatten(item)})
        if len(group) >= 2 and width <= MAX_COLUMNS:
            tables.append({key: flatten(item) for key, item in group})
        elif compact and len(group) >= MANY:
            many.append(dict(group))
        elif len(group) == 1 and width <= MAX_MERGE:
            key, item = group[0]
            leaves.update(flatten(item, key + "."))
        else:
            nested.extend(group)
    if leaves:
        out.key_values(leaves)
    for rows in tables:
        out.table(rows)
    for rows in many:
        out.leaf_table(rows)
    for key, item in nested:
        name = f"{path}.{key}" if path else key
        if level > MAX_LEVEL:
            out.add(f"- {_code(name)}: {_cell(item)}", "")
            continue
        out.heading(level, _code(name))
        render_dict(out, name, item, level + 1, compact)


def render_file(name: str, data: Any) -> list[str]:
    """The section of one results file."""
    if not isinstance(data, dict):
        raise ResultsPageError(
            f"{name}: a results file must hold one JSON object with at least 'benchmark' and "
            f"'metrics'; it holds a {type(data).__name__}. Rewrite it with its benchmark script.")
    out = _Writer()
    out.heading(2, name)
    out.add("| benchmark | gpu | date | commit |", "|---|---|---|---|")
    out.add("| " + " | ".join(_escape(str(data[k])) if k in data else "not recorded"
                              for k in PROVENANCE) + " |", "")
    notes = {k: v for k, v in data.items() if k not in SPECIAL and isinstance(v, str)
             and len(v) > MAX_CELL_TEXT}
    for key, text in notes.items():
        out.add(f"- {_code(key)}: {_escape(text)}")
    if notes:
        out.add("")
    metrics = data.get("metrics")
    out.heading(3, "metrics")
    if isinstance(metrics, dict) and metrics:
        render_dict(out, "metrics", metrics, 4)
    else:
        out.add("No metrics recorded in this file." if not metrics
                else f"`metrics`: {_cell(metrics)}", "")
    definitions = data.get("definitions")
    if isinstance(definitions, dict) and definitions:
        out.heading(3, "definitions")
        for key, text in definitions.items():
            out.add(f"- {_code(key)}: {_cell(text) if not isinstance(text, str) else _escape(text)}")
        out.add("")
    rest = {k: v for k, v in data.items() if k not in SPECIAL and k not in notes}
    if rest:
        out.heading(3, "run details")
        render_dict(out, "", rest, 4, compact=True)
    return out.lines


def load(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ResultsPageError(f"{path.name} is not valid JSON ({exc}); fix or re-run the "
                               f"benchmark that wrote it, then regenerate the page") from exc


def render(results_dir: Path = RESULTS) -> str:
    """The whole page for every `*.json` in `results_dir`, in file-name order."""
    files = sorted(results_dir.glob("*.json"))
    if not files:
        raise ResultsPageError(f"no *.json results in {results_dir}: run a benchmark first")
    datas = {path.name: load(path) for path in files}
    out = _Writer()
    out.add("# Measured results", "",
            "<!-- Generated by benchmarks/results_page.py from benchmarks/results/*.json: "
            "do not edit by hand; run `make results`. -->", "",
            "Every number on this page is read from the results files in `benchmarks/results/`, "
            "written by the benchmark scripts in `benchmarks/`. What each benchmark measures, "
            "and how to read it, is in the guides: [measuring](measuring.md), "
            "[Ray](ray.md), [forecasters](forecasters.md), [search](search.md), "
            "[RL](rl.md), [dataset](dataset.md), [app](app.md), [your own problems](problems.md) "
            "(byo). `commit` is the commit of the "
            "code that wrote the file, as the file records it.", "",
            "| file | benchmark | gpu | date | commit |", "|---|---|---|---|---|")
    for name, data in datas.items():
        get = (lambda k, d=data: _escape(str(d[k])) if isinstance(d, dict) and k in d
               else "not recorded")
        anchor = name.replace(".", "").lower()
        out.add(f"| [{name}](#{anchor}) | " + " | ".join(get(k) for k in PROVENANCE) + " |")
    out.add("")
    for name, data in datas.items():
        out.add(*render_file(name, data))
    while out.lines and out.lines[-1] == "":
        out.lines.pop()
    return "\n".join(out.lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--results", type=Path, default=RESULTS, help="results directory")
    parser.add_argument("--out", type=Path, default=PAGE, help="page to write")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 when the page differs from what it would be")
    args = parser.parse_args(argv)
    try:
        text = render(args.results)
    except ResultsPageError as exc:
        print(f"results_page: {exc}", file=sys.stderr)
        return 2
    if args.check:
        current = args.out.read_text() if args.out.exists() else ""
        if current != text:
            print(f"{args.out} is out of date: run `make results`", file=sys.stderr)
            return 1
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(f"wrote {args.out} ({len(text.splitlines())} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
