"""Generators: where a search's candidates come from.

A generator gives the search its *seeds* (the first kernels, no parent) and the *children* of
a parent. Children are Candidates, or `FailedGeneration` records when a proposal could not be
turned into a valid candidate (an unparsable LLM answer, a client error): those are logged as
`failed_generation` events, never raised. Generators are deterministic given the RNG in the
context (the LLM generator as deterministic as its server).
"""
from __future__ import annotations

import abc
import random
import re
import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Protocol, Sequence

from workbench.errors import ConfigError
from workbench.execution.scrub import scrub
from workbench.records import Candidate, Measurement, Problem, candidate_id
from workbench.search.mutations import OPS, neighbourhood, validate_source

PROMPTS_DIR = Path(__file__).parent / "prompts"


@dataclass(frozen=True)
class FailedGeneration:
    """A proposal that did not yield a candidate. `raw` keeps what came back (e.g. the answer)."""

    reason: str
    raw: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    def to_payload(self) -> dict[str, Any]:
        return {"reason": self.reason, "raw": self.raw[-4000:], "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "seconds": self.seconds}


@dataclass
class GenerationContext:
    """What a generator may use to propose `n` children of `parent`.

    `seen` holds the ids of every candidate this search has already generated (children must
    avoid them). `parent_measurement` is None for a trusted (unmeasured) parent.
    """

    problem: Problem
    parent: Candidate
    n: int
    rng: random.Random
    seen: set[str] = field(default_factory=set)
    parent_measurement: Measurement | None = None
    parent_speedup: float | None = None
    hardware_key: str = ""


class Generator(abc.ABC):
    #: Stored with the search, e.g. "mutation", "replay", "llm:qwen2.5-coder".
    name: str

    @abc.abstractmethod
    def seeds(self, problem: Problem) -> list[Candidate]:
        """The first candidates of a search of `problem` (no parent), in a fixed order."""

    @abc.abstractmethod
    def children(self, ctx: GenerationContext) -> list[Candidate | FailedGeneration]:
        """Up to `ctx.n` new children of `ctx.parent` (fewer when no more exist)."""

    def generation_info(self, candidate_id: str) -> dict[str, Any] | None:
        """How a candidate this generator returned was written, for the search's `generated`
        event: a model's raw answer ("answer"), "model", "prompt_tokens", "completion_tokens",
        "seconds" (wall time of the call) and "shared_by" (children written by that one call).
        None for generators that call no model."""
        return None


# --------------------------------------------------------------------------- zoo + mutation
class ZooGenerator(Generator):
    """Seeds from the hand-written kernels in `workbench/zoo`; for a problem with none there,
    the seeds `workbench.seeds.seeds_for` makes (an Inductor seed when one is given for the
    problem in `inductor`, the reference lowered to the kernel families, the generic seed), each
    seed's kind recorded in its `generated` event. Proposes no children."""

    name = "zoo"

    def __init__(self, include_cuda: bool = False, inductor: dict[str, str | None] | None = None,
                 family_variants: bool = True, inductor_gpu: int | None = None):
        """`inductor`: Inductor seeds by problem id; `inductor_gpu`: make the Inductor seed of a
        problem not in `inductor` on this local GPU (a subprocess; `workbench.seeds.inductor`);
        `family_variants`: also each family kind lowered alone (more seeds, more tracing)."""
        self.include_cuda = include_cuda
        self.inductor = dict(inductor or {})
        self.inductor_gpu = inductor_gpu
        self.family_variants = family_variants
        self._kinds: dict[str, str] = {}

    def seeds(self, problem: Problem) -> list[Candidate]:
        from workbench.seeds import seed_kind, seeds_for
        from workbench.zoo import zoo_candidates

        cands = [c for c in zoo_candidates(problem.id) if self.include_cuda or c.backend != "cuda"]
        if not cands:
            if problem.id not in self.inductor and self.inductor_gpu is not None:
                from workbench.seeds.inductor import seed_on_gpu

                row = seed_on_gpu(problem, self.inductor_gpu)
                self.inductor[problem.id] = row.get("source") if row.get("ok") else None
            cands = seeds_for(problem, self.inductor.get(problem.id), family_variants=self.family_variants)
        if not cands:
            raise ConfigError(f"the zoo has no kernel for {problem.id} and no seed could be made from its reference "
                              "(it neither builds on the meta device nor traces); check that `workbench problems "
                              f"show {problem.id}` loads it, add a kernel under workbench/zoo/level{problem.level}/"
                              f"{problem.name}/, or seed the search from another generator (--generator llm)")
        for c in cands:
            self._kinds[c.id] = seed_kind(c.origin) or ""
        return cands

    def children(self, ctx: GenerationContext) -> list[Candidate | FailedGeneration]:
        return []

    def generation_info(self, candidate_id: str) -> dict[str, Any] | None:
        """{"seed_kind": ...} for a seed this generator returned (zoo, inductor, family, generic)."""
        kind = self._kinds.get(candidate_id)
        return {"seed_kind": kind} if kind else None


class MutationGenerator(Generator):
    """Children by the mutation operators of `mutations.py` (no LLM); seeds from `seed_from`."""

    name = "mutation"

    def __init__(self, seed_from: Generator | None = None, ops: Sequence[str] = OPS):
        self.seed_from = seed_from or ZooGenerator()
        self.ops = tuple(ops)

    def seeds(self, problem: Problem) -> list[Candidate]:
        return self.seed_from.seeds(problem)

    def generation_info(self, candidate_id: str) -> dict[str, Any] | None:
        return self.seed_from.generation_info(candidate_id)

    def children(self, ctx: GenerationContext) -> list[Candidate | FailedGeneration]:
        return list(neighbourhood(ctx.parent, ctx.n, seed=ctx.rng.getrandbits(32), ops=self.ops,
                                  exclude=ctx.seen))


# --------------------------------------------------------------------------- replay
class ReplayGenerator(Generator):
    """Proposes only candidates the replay cache holds, so every one can be "measured" offline.

    Seeds: cached candidates of the problem whose parent is not cached (roots), ordered by
    (generation, id). Children of a parent: cached candidates whose parent_id is that parent;
    when none are left, other unseen cached candidates of the same problem (the search's
    lineage then records the selected parent; the candidate record keeps its own).
    """

    name = "replay"

    def __init__(self, candidates: Iterable[Candidate], measured_ids: Iterable[str] | None = None,
                 max_seeds: int | None = None):
        keep = set(measured_ids) if measured_ids is not None else None
        self._pool: dict[str, Candidate] = {c.id: c for c in candidates if keep is None or c.id in keep}
        self.max_seeds = max_seeds

    def _of(self, problem_id: str) -> list[Candidate]:
        return sorted((c for c in self._pool.values() if c.problem_id == problem_id), key=lambda c: c.id)

    def seeds(self, problem: Problem) -> list[Candidate]:
        pool = self._of(problem.id)
        if not pool:
            raise ConfigError(f"the replay cache holds no candidate of {problem.id}; pick a problem "
                              "with recorded measurements (`workbench dataset load-shipped` loads them)")
        roots = [c for c in pool if not c.parent_id or c.parent_id not in self._pool]
        roots.sort(key=lambda c: (c.generation, c.id))
        return roots[: self.max_seeds] if self.max_seeds else roots

    def children(self, ctx: GenerationContext) -> list[Candidate | FailedGeneration]:
        pool = [c for c in self._of(ctx.problem.id) if c.id not in ctx.seen and c.id != ctx.parent.id]
        own = [c for c in pool if c.parent_id == ctx.parent.id]
        src = own if own else pool
        if len(src) <= ctx.n:
            picked = list(src)
            ctx.rng.shuffle(picked)
            return picked  # type: ignore[return-value]
        return ctx.rng.sample(src, ctx.n)  # type: ignore[return-value]


# --------------------------------------------------------------------------- LLM
class ChatLike(Protocol):
    """What LLMGenerator needs from `workbench.llm.client.ChatClient`."""

    model: str

    def chat(self, messages: list[dict[str, str]], **kw: Any) -> Any:  # -> ChatResult
        ...


_CODE_BLOCK = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.S)


def extract_module(text: str) -> str | None:
    """The last fenced code block of `text` that defines ModelNew and is valid Python, or None.

    An unclosed final block (a truncated answer) is tried as well.
    """
    blocks = _CODE_BLOCK.findall(text or "")
    tail = re.search(r"```(?:python|py)?[ \t]*\n((?:(?!```).)*)$", text or "", re.S)
    if tail:
        blocks.append(tail.group(1))
    for block in reversed(blocks):
        if "ModelNew" in block and validate_source(block) is None:
            return block.strip() + "\n"
    return None


def render_prompt(template: str, **values: Any) -> str:
    """Fill a `$name` template (string.Template: code braces need no escaping)."""
    return string.Template(template).safe_substitute({k: str(v) for k, v in values.items()})


def describe_result(m: Measurement | None, speedup: float | None = None, max_log_chars: int = 3000) -> str:
    """The parent's measured result and logs, as shown to the model (scrubbed of anything that
    looks like a credential: a candidate wrote the reason and the log)."""
    if m is None:
        if speedup is not None:
            return f"Not measured; a confident forecast put its speedup near {speedup:.2f}x."
        return "Not measured yet."
    lines = [f"Status: {m.status.value}."]
    if m.ok and m.speedup:
        lines.append(f"Speedup over the reference: {m.speedup:.3f}x "
                     f"(reference {m.reference_ms:.4g} ms, kernel {m.candidate_ms:.4g} ms).")
    if m.reason:
        lines.append(f"Reason: {m.reason}")
    if m.log:
        lines.append("Compile/correctness log (tail):\n" + m.log[-max_log_chars:])
    return scrub("\n".join(lines))


class LLMGenerator(Generator):
    """Children written by an LLM through an OpenAI-compatible chat client.

    One chat call per child, prompt from `prompts/<prompt_id>.md`. The answer's last valid
    ```python block defining ModelNew becomes the child (origin "llm:<model>:<prompt_id>");
    anything else is a FailedGeneration carrying the answer. Seeds come from `seed_from`.
    """

    def __init__(self, client: ChatLike, prompt_id: str = "improve_kernel",
                 seed_from: Generator | None = None, system: str | None = None,
                 chat_kwargs: dict[str, Any] | None = None):
        path = PROMPTS_DIR / f"{prompt_id}.md"
        if not path.exists():
            names = ", ".join(sorted(p.stem for p in PROMPTS_DIR.glob("*.md")))
            raise ConfigError(f"no prompt template {prompt_id!r}; available: {names}")
        self.client = client
        self.prompt_id = prompt_id
        self.template = path.read_text()
        self.seed_from = seed_from or ZooGenerator()
        self.system = system or "You write fast, correct GPU kernels in Triton for PyTorch modules."
        self.chat_kwargs = {"max_tokens": 4096, "temperature": 0.8, **(chat_kwargs or {})}
        self.name = f"llm:{getattr(client, 'model', 'model')}"
        self._info: dict[str, dict[str, Any]] = {}

    def seeds(self, problem: Problem) -> list[Candidate]:
        return self.seed_from.seeds(problem)

    def prompt(self, ctx: GenerationContext) -> list[dict[str, str]]:
        p = ctx.problem
        user = render_prompt(self.template, problem_id=p.id, dtype=p.dtype, description=p.description,
                             reference=p.source.strip(), parent_source=ctx.parent.source.strip(),
                             hardware=ctx.hardware_key or "GPU",
                             parent_result=describe_result(ctx.parent_measurement, ctx.parent_speedup))
        return [{"role": "system", "content": self.system}, {"role": "user", "content": scrub(user)}]

    def children(self, ctx: GenerationContext) -> list[Candidate | FailedGeneration]:
        out: list[Candidate | FailedGeneration] = []
        messages = self.prompt(ctx)
        model = getattr(self.client, "model", "model")
        for _ in range(ctx.n):
            try:
                res = self.client.chat(messages, **self.chat_kwargs)
            except Exception as e:  # noqa: BLE001 - a failed call is a failed generation, not a crash
                out.append(FailedGeneration(f"chat call failed: {type(e).__name__}: {e}"))
                continue
            text = getattr(res, "text", "") or ""
            cost = {"prompt_tokens": int(getattr(res, "prompt_tokens", 0) or 0),
                    "completion_tokens": int(getattr(res, "completion_tokens", 0) or 0),
                    "seconds": float(getattr(res, "seconds", 0.0) or 0.0)}
            source = extract_module(text)
            if source is None:
                out.append(FailedGeneration("the answer has no valid ```python block defining ModelNew",
                                            raw=text, **cost))
                continue
            cid = candidate_id(source)
            if cid in ctx.seen or cid == ctx.parent.id or any(getattr(c, "id", None) == cid for c in out):
                out.append(FailedGeneration(f"the answer repeats an existing candidate ({cid})", raw=text, **cost))
                continue
            child = Candidate.from_source(ctx.problem.id, source, parent_id=ctx.parent.id,
                                          generation=ctx.parent.generation + 1,
                                          origin=f"llm:{model}:{self.prompt_id}")
            self._info[child.id] = {"answer": text[-8000:], "model": model, "shared_by": 1, **cost}
            out.append(child)
        return out

    def generation_info(self, candidate_id: str) -> dict[str, Any] | None:
        return self._info.get(candidate_id) or self.seed_from.generation_info(candidate_id)


# --------------------------------------------------------------------------- LLM-guided mutation
#: One line per mutation operator, as the model reads it.
EDIT_HELP = {
    "block": "change a block or tile size (BLOCK*/TILE*) to a neighbouring power of two",
    "num_warps": "change or add num_warps (warps per program) at the launch",
    "num_stages": "change or add num_stages (software pipelining depth)",
    "grid": "change the work per program (GROUP*/ROWS*/PER_PROGRAM*/SPLIT*/CHUNK*)",
    "unroll": "change a loop's unroll factor",
    "acc_dtype": "switch an accumulator or cast between fp32 and fp16/bf16",
    "swap_order": "reorder two independent loads, or the operands of a commutative op",
    "dot_precision": 'switch a kernel\'s fp32 tl.dot between input_precision="ieee" and "tf32x3" (tensor cores, '
                     "near-fp32 error)",
}
_EDITS_LINE = re.compile(r"EDITS\s*:\s*(.+)", re.I)


def chosen_edits(answer: str, allowed: Sequence[str]) -> list[str]:
    """The edit names an answer chose, best first, each once: those on its last `EDITS:` line,
    else every allowed name the answer mentions, in order of first mention."""
    lines = _EDITS_LINE.findall(answer or "")
    text = lines[-1] if lines else (answer or "")
    found = sorted(((m.start(), op) for op in allowed
                    for m in [re.search(rf"\b{re.escape(op)}\b", text, re.I)] if m), key=lambda t: t[0])
    return [op for _, op in found]


class LLMGuidedGenerator(Generator):
    """Children by the mutation operators, chosen by an LLM: one chat call per parent
    (`prompts/choose_edits.md`) lists the operators that can change the parent; the answer names
    the edits to try, best first, and each child applies one of them (cycling through the chosen
    ones with different values until `ctx.n` children or no new edit). Every child is a valid
    module by construction, so a small model can steer a search it could not write kernels for.
    An answer that names no edit, or a failed call, is one FailedGeneration carrying the answer.
    Origins are "llm-guided:<model>:<mutation origin>". Seeds come from `seed_from`.
    """

    def __init__(self, client: ChatLike, seed_from: Generator | None = None,
                 chat_kwargs: dict[str, Any] | None = None, ops: Sequence[str] = OPS):
        self.client = client
        self.template = (PROMPTS_DIR / "choose_edits.md").read_text()
        self.seed_from = seed_from or ZooGenerator()
        self.ops = tuple(ops)
        self.chat_kwargs = {"max_tokens": 256, "temperature": 0.7, **(chat_kwargs or {})}
        self.name = f"llm-guided:{getattr(client, 'model', 'model')}"
        self._info: dict[str, dict[str, Any]] = {}

    def seeds(self, problem: Problem) -> list[Candidate]:
        return self.seed_from.seeds(problem)

    def generation_info(self, candidate_id: str) -> dict[str, Any] | None:
        return self._info.get(candidate_id) or self.seed_from.generation_info(candidate_id)

    def prompt(self, ctx: GenerationContext, ops: Sequence[str]) -> list[dict[str, str]]:
        p = ctx.problem
        user = render_prompt(self.template, problem_id=p.id, dtype=p.dtype, hardware=ctx.hardware_key or "GPU",
                             edits="\n".join(f"- {op}: {EDIT_HELP.get(op, op)}" for op in ops),
                             parent_source=ctx.parent.source.strip(),
                             parent_result=describe_result(ctx.parent_measurement, ctx.parent_speedup, 1500))
        return [{"role": "system", "content": "You choose edits that make GPU kernels faster."},
                {"role": "user", "content": scrub(user)}]

    def children(self, ctx: GenerationContext) -> list[Candidate | FailedGeneration]:
        from workbench.search.mutations import applicable_ops

        ops = applicable_ops(ctx.parent, self.ops)
        if not ops:
            return []
        try:
            res = self.client.chat(self.prompt(ctx, ops), **self.chat_kwargs)
        except Exception as e:  # noqa: BLE001 - a failed call is a failed generation, not a crash
            return [FailedGeneration(f"chat call failed: {type(e).__name__}: {e}")]
        text = getattr(res, "text", "") or ""
        cost = {"prompt_tokens": int(getattr(res, "prompt_tokens", 0) or 0),
                "completion_tokens": int(getattr(res, "completion_tokens", 0) or 0),
                "seconds": float(getattr(res, "seconds", 0.0) or 0.0)}
        chosen = chosen_edits(text, ops)
        if not chosen:
            return [FailedGeneration("the answer names none of the edits offered", raw=text, **cost)]
        model = getattr(self.client, "model", "model")
        out: list[Candidate] = []
        seen = set(ctx.seen) | {ctx.parent.id}
        stuck = set()
        i = 0
        while len(out) < ctx.n and len(stuck) < len(chosen):
            op = chosen[i % len(chosen)]
            i += 1
            if op in stuck:
                continue
            kids = neighbourhood(ctx.parent, 1, seed=ctx.rng.getrandbits(32), ops=[op], max_depth=2, exclude=seen)
            if not kids:
                stuck.add(op)
                continue
            k = kids[0]
            seen.add(k.id)
            out.append(Candidate.from_source(k.problem_id, k.source, backend=k.backend, parent_id=k.parent_id,
                                             generation=k.generation, origin=f"llm-guided:{model}:{k.origin}"))
        for c in out:
            self._info[c.id] = {"answer": text[-8000:], "model": model, "shared_by": len(out),
                                "edits": chosen, **cost}
        return list(out)
