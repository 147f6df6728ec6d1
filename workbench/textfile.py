"""Reading source files that users and models hand to the workbench."""
from __future__ import annotations

from pathlib import Path

from workbench.errors import WorkbenchError


def read_source(path: str | Path, what: str, error: type[WorkbenchError]) -> str:
    """The text of `path`, which must be UTF-8 (Python's source encoding; a BOM is allowed).

    Raises `error` naming the file (`what` says which kind, e.g. "candidate") when it cannot be
    read or is not UTF-8, with the line and byte offset of the first bad byte."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise error(f"{what} file {path}: cannot read: {e.strerror or e}") from e
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise error(f"{what} file {path} is not UTF-8 text (byte 0x{data[e.start]:02x} at offset "
                    f"{e.start}, line {line}); save it as UTF-8") from e
