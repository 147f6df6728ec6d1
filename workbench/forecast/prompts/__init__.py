"""Prompt templates of the LLM forecasters, kept as text files next to this module.

A prompt set `NAME` is three files: `NAME.system.txt`, `NAME.user.txt` (speedup over the
reference) and `NAME.user_parent.txt` (speedup over a parent kernel). They are
`string.Template` texts (`$name` placeholders; write `$$` for a literal dollar sign).

A set's id is "NAME@<12 hex digits of the sha256 of its files>", so a candidate's origin or
a cached forecast names the exact wording that produced it.
"""
from __future__ import annotations

import hashlib
import json
import string
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from workbench import bins
from workbench.errors import ConfigError
from workbench.forecast.hardware_table import render_hardware_table
from workbench.records import Candidate, Hardware, Problem

PROMPTS_DIR = Path(__file__).parent
_PARTS = ("system", "user", "user_parent")
RELATIVE_TO = ("reference", "parent")

#: Default cap on each source shown (characters); longer sources are cut in the middle.
DEFAULT_MAX_SOURCE_CHARS = 12_000


def available(directory: str | Path = PROMPTS_DIR) -> list[str]:
    """Names of the complete prompt sets in `directory`."""
    d = Path(directory)
    names = {p.name.split(".")[0] for p in d.glob("*.system.txt")}
    return sorted(n for n in names if all((d / f"{n}.{part}.txt").is_file() for part in _PARTS))


def truncate_source(source: str, max_chars: int) -> str:
    """`source` cut to at most ~`max_chars` characters, keeping its head and tail."""
    if max_chars <= 0 or len(source) <= max_chars:
        return source
    head = source[: max_chars * 2 // 3]
    tail = source[-(max_chars // 3):]
    cut = len(source) - len(head) - len(tail)
    return f"{head}\n# ... [{cut} characters left out] ...\n{tail}"


@dataclass(frozen=True)
class PromptSet:
    """The three templates of one prompt set and its content-hash id."""

    name: str
    system: str
    user: str
    user_parent: str

    @property
    def id(self) -> str:
        h = hashlib.sha256("\0".join((self.system, self.user, self.user_parent)).encode())
        return f"{self.name}@{h.hexdigest()[:12]}"

    @classmethod
    def load(cls, name: str = "default", directory: str | Path = PROMPTS_DIR) -> "PromptSet":
        """Read prompt set `name` from `directory`. Raises ConfigError naming what is missing."""
        d = Path(directory)
        texts = {}
        for part in _PARTS:
            path = d / f"{name}.{part}.txt"
            if not path.is_file():
                have = ", ".join(available(d)) or "none"
                raise ConfigError(f"prompt set {name!r}: {path} is missing; available sets in "
                                  f"{d}: {have}")
            texts[part] = path.read_text()
        return cls(name=name, **texts)

    def messages(self, problem: Problem, candidate: Candidate, hardware: Hardware,
                 parent: Candidate | None = None, relative_to: str = "reference",
                 max_source_chars: int = DEFAULT_MAX_SOURCE_CHARS) -> list[dict[str, str]]:
        """The chat messages (system, user) asking for one forecast.

        `relative_to="parent"` needs `parent`. Raises ConfigError on a bad request or a
        template whose placeholders do not match.
        """
        if relative_to not in RELATIVE_TO:
            raise ConfigError(f"relative_to must be one of {RELATIVE_TO}, got {relative_to!r}")
        if relative_to == "parent" and parent is None:
            raise ConfigError("relative_to='parent' needs the parent candidate: pass parent=")
        values: dict[str, Any] = {
            "bin_table": bins.table(),
            "problem_id": problem.id,
            "problem_description": (problem.description or problem.name).strip(),
            "reference_source": truncate_source(problem.source.strip(), max_source_chars),
            "candidate_source": truncate_source(candidate.source.strip(), max_source_chars),
            "candidate_backend": candidate.backend,
            "hardware_table": render_hardware_table(hardware),
        }
        if parent is not None:
            values["parent_source"] = truncate_source(parent.source.strip(), max_source_chars)
            values["parent_backend"] = parent.backend
        user_t = self.user_parent if relative_to == "parent" else self.user
        try:
            system = string.Template(self.system).substitute(values)
            user = string.Template(user_t).substitute(values)
        except (KeyError, ValueError) as e:
            raise ConfigError(f"prompt set {self.name!r} has a bad placeholder ({e}); "
                              f"known placeholders: {', '.join(sorted(values))}") from e
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def prompt_hash(messages: Sequence[Mapping[str, Any]], **settings: Any) -> str:
    """sha256 (24 hex digits) of rendered messages plus any generation settings."""
    blob = json.dumps({"messages": list(messages), "settings": settings}, sort_keys=True,
                      default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]
