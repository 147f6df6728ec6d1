"""Where a search measures: a replay of recorded measurements, a local GPU, the CPU interpreter
or a Ray cluster, parsed once from the strings users type (`--gpu`, the app's GPU list)."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from workbench.errors import ConfigError
from workbench.spec.registry import EXECUTORS

KINDS = ("replay", "cuda", "cpu", "ray")
FORMS_HELP = ("replay:KEY (answer from recorded measurements of GPU type KEY, e.g. replay:h100), "
              "cuda or cuda:N (local GPU N), cpu (Triton interpreter), ray or ray:ADDRESS (the GPUs "
              "of a Ray cluster; ADDRESS: auto or ray://HOST:10001; none: a local cluster), "
              "ray-cpu[:ADDRESS] (the cluster's CPUs)")


class TargetError(ConfigError):
    """A target string or combination that is not understood; the message lists the forms."""


@dataclass(frozen=True)
class Target:
    """A measurement target.

    kind: replay | cuda | cpu | ray. key: the recorded GPU type a replay answers from (h100).
    index: the local GPU of kind cuda. device: what a Ray cluster measures on (cuda | cpu).
    address: the Ray cluster (None: start a local one). Fields that do not apply to the kind
    keep their defaults, so equal targets compare equal.
    """

    kind: str
    key: str = ""
    index: int = 0
    device: str = ""
    address: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise TargetError(f"target kind {self.kind!r} is not one of {', '.join(KINDS)}; use {FORMS_HELP}")
        if self.kind == "replay" and not self.key:
            raise TargetError(f"a replay target names the recorded GPU type, e.g. replay:h100; use {FORMS_HELP}")
        if self.kind == "ray" and self.device not in ("cuda", "cpu"):
            raise TargetError(f"a ray target measures on cuda or cpu, not {self.device!r}")
        if self.index < 0:
            raise TargetError(f"cuda:{self.index}: a GPU index is 0 or more")

    @classmethod
    def parse(cls, text: str, *, bare_index: bool = False) -> "Target":
        """A Target from `replay:KEY`, `cuda`, `cuda:N`, `cpu`, `ray`, `ray:ADDRESS`, `ray-cpu`
        or `ray-cpu:ADDRESS` (and a bare `N` for `cuda:N` when `bare_index`, as `workbench
        measure --gpu 1` takes); anything else raises TargetError naming these forms."""
        raw = str(text or "").strip()
        if bare_index and raw.isdigit():
            return cls("cuda", index=int(raw))
        head, sep, rest = raw.partition(":")
        head = head.lower()
        if head == "replay" and rest.strip():
            return cls("replay", key=rest.strip().lower())
        if head == "cpu" and not sep:
            return cls("cpu")
        if head == "cuda":
            if not sep:
                return cls("cuda")
            if rest.isdigit():
                return cls("cuda", index=int(rest))
        if head in ("ray", "ray-cpu"):
            return cls("ray", device="cpu" if head == "ray-cpu" else "cuda", address=rest.strip() or None)
        raise TargetError(f"target {raw!r} is not understood; use {FORMS_HELP}")

    @classmethod
    def local(cls, text: str, *, bare_index: bool = False, what: str = "device") -> "Target":
        """A target on this machine, for code that runs torch itself (`workbench measure`, RL
        training): `cpu`, `cuda` or `cuda:N` (a bare `N` with `bare_index`). Replay and Ray
        targets, and anything else, raise TargetError; `what` names the option in the message."""
        try:
            target = cls.parse(text, bare_index=bare_index)
        except TargetError:
            target = None
        if target is None or target.kind not in ("cpu", "cuda"):
            raise TargetError(f"{what} {str(text).strip()!r} is not a device of this machine; use cpu, cuda "
                              f"or cuda:N (cuda:0, cuda:1, ...{', or N' if bare_index else ''})")
        return target

    @property
    def cuda(self) -> bool:
        """Measures or runs on a GPU: a local one (cuda) or a Ray cluster's (ray)."""
        return self.device == "cuda" if self.kind == "ray" else self.kind == "cuda"

    def with_executor(self, executor: str, address: str | None = None) -> "Target":
        """This target measured by `executor` (local | ray): `--executor ray` turns cpu or cuda
        into the Ray cluster's CPUs or GPUs (a cuda index does not pick a cluster GPU)."""
        if executor not in EXECUTORS:
            raise TargetError(f"executor {executor!r}: use one of {', '.join(EXECUTORS)}")
        if executor == "local" or self.kind == "ray":
            return self
        if self.kind == "replay":
            raise TargetError(f"{self} answers from recorded measurements; the ray executor measures live "
                              "(use --gpu cuda or --gpu cpu with it, or drop --executor ray)")
        return Target("ray", device="cpu" if self.kind == "cpu" else "cuda", address=address or None)

    @property
    def replay(self) -> bool:
        return self.kind == "replay"

    @property
    def live(self) -> bool:
        return self.kind != "replay"

    def __str__(self) -> str:
        if self.kind == "replay":
            return f"replay:{self.key}"
        if self.kind == "cuda":
            return f"cuda:{self.index}"
        if self.kind == "cpu":
            return "cpu"
        head = "ray" if self.device == "cuda" else "ray-cpu"
        return f"{head}:{self.address}" if self.address else head

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Target":
        unknown = set(d) - {"kind", "key", "index", "device", "address"}
        if unknown:
            raise TargetError(f"stored target has unknown fields {sorted(unknown)}")
        return cls(**d)
