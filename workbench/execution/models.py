"""Problem modules, models and inputs, as both sides of a measurement build them.

The judge's processes (timer.py, the reference worker) and the candidate's worker (worker.py)
load the same problem file at the same sizes; this module holds what they share: inputs made
on the device, weights copied by name, the problem's second shape. Nothing here imports
candidate code.
"""
from __future__ import annotations

from typing import Any, Mapping


def to_device(x: Any, device: Any) -> Any:
    """Tensors in `x` (a tensor, or a list/tuple of tensors and plain values) moved to `device`."""
    import torch

    if isinstance(x, torch.Tensor):
        return x.to(device)
    if isinstance(x, (list, tuple)):
        return type(x)(to_device(v, device) for v in x)
    return x


def make_inputs(problem_mod: Any, device: Any) -> list:
    """`get_inputs()` created directly on `device` (random inputs of a large problem take
    seconds to draw on the CPU), then moved there for any tensor made elsewhere."""
    import torch

    with torch.device(device):
        return list(to_device(problem_mod.get_inputs(), device))


def clone(x: Any) -> Any:
    import torch

    if isinstance(x, torch.Tensor):
        return x.clone()
    if isinstance(x, (list, tuple)):
        return type(x)(clone(v) for v in x)
    return x


def flatten(x: Any) -> list:
    return list(x) if isinstance(x, (tuple, list)) else [x]


def build_reference(problem_mod: Any, seed: int) -> Any:
    """The problem's Model, built with `seed` (on the CPU; the caller moves it)."""
    import torch

    torch.manual_seed(seed)
    return problem_mod.Model(*problem_mod.get_init_inputs())


def copy_state(ref: Any, new: Any) -> bool:
    """Give ModelNew the reference's weights, by name.

    `ref` is the reference module or its state dict (a mapping of names to tensors). When both
    have the same parameter and buffer names, each of ModelNew's tensors is replaced by a copy
    of the reference's (shapes included: a candidate may create placeholders when its __init__
    cannot know the problem's sizes). Returns whether anything was copied.
    """
    import torch

    rs = dict(ref) if isinstance(ref, Mapping) else ref.state_dict()
    ns = new.state_dict()
    if not rs or set(rs) != set(ns):
        return False
    for name, value in rs.items():
        owner_path, _, attr = name.rpartition(".")
        owner = new.get_submodule(owner_path) if owner_path else new
        if attr in owner._parameters:
            owner._parameters[attr] = torch.nn.Parameter(value.detach().clone(), requires_grad=False)
        else:
            owner._buffers[attr] = value.detach().clone()
    return True


def perturbed_sizes(sizes: dict[str, Any]) -> dict[str, int]:
    """A second shape near `sizes`: integer sizes >= 8 that are not powers of two grow by
    about a third (powers of two and small sizes are often structural: head dim, patch)."""
    out = {}
    for k, v in sizes.items():
        if isinstance(v, int) and not isinstance(v, bool) and v >= 8 and v & (v - 1):
            out[k] = v + max(2, v // 3)
    return out


def second_shape(problem: Mapping[str, Any], device: str, precision: str = "native"):
    """The problem module at a second shape (a LoadedProblem, at `precision`: see
    `workbench.problems.contract`), or None when there is none the reference accepts. On a
    GPU: the CPU sizes; on the CPU: perturbed CPU sizes."""
    import torch

    from workbench.problems import load_source

    if device != "cpu":
        small = load_source(problem["source"], name=problem["id"], cpu=True, precision=precision)
        base = load_source(problem["source"], name=problem["id"])
        return small if small.sizes != base.sizes else None
    cpu_sizes = load_source(problem["source"], name=problem["id"], cpu=True)
    cpu_keys = getattr(cpu_sizes.module, "CPU_SIZES", {}) or {}
    bumped = perturbed_sizes({k: cpu_sizes.sizes[k] for k in cpu_keys if k in cpu_sizes.sizes})
    if not bumped:
        return None
    try:
        other = load_source(problem["source"], name=problem["id"], sizes=bumped, cpu=True, precision=precision)
        torch.manual_seed(0)
        with torch.no_grad():
            other.Model(*other.get_init_inputs())(*other.get_inputs())
    except Exception:  # noqa: BLE001 - the reference does not support that shape: no second shape
        return None
    return other


def problem_shapes(problem: Mapping[str, Any], device: str, second: bool = True,
                   precision: str = "native") -> dict:
    """{"full": LoadedProblem, "second": LoadedProblem} (without "second" when there is none
    or `second` is False): the shapes a candidate is checked at, loaded at `precision` (the
    run's contract: Model and floating-point inputs cast)."""
    from workbench.problems import load_source

    out = {"full": load_source(problem["source"], name=problem["id"], cpu=(device == "cpu"), precision=precision)}
    if second:
        other = second_shape(problem, device, precision)
        if other is not None:
            out["second"] = other
    return out


def longest_size(loaded: Any) -> int:
    """The largest size global of a loaded problem (the fp32 tolerance's reduction length)."""
    return int(max(loaded.sizes.values(), default=1)) if loaded.sizes else 1
