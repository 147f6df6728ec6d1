"""The LLM-guided generator: the model names mutation edits, the mutation operators write the
children (valid modules by construction). The model's answers here are fixed texts given by a
stand-in client (what a server returned is parsed the same way); a real model drives it in
tests/ui/test_browser_llm.py."""
from __future__ import annotations

import random
from dataclasses import dataclass

from workbench.problems import get_problem
from workbench.search.generators import (FailedGeneration, GenerationContext, LLMGuidedGenerator,
                                         ZooGenerator, chosen_edits)
from workbench.search.mutations import validate_source


@dataclass
class Answer:
    text: str
    prompt_tokens: int = 120
    completion_tokens: int = 30
    seconds: float = 0.5


class FixedAnswers:
    """A client whose chat() returns the given answers in turn and keeps the prompts it got."""

    model = "fixed"

    def __init__(self, *texts: str):
        self.texts, self.prompts = list(texts), []

    def chat(self, messages, **kw):
        self.prompts.append(messages)
        return Answer(self.texts.pop(0))


def test_chosen_edits_reads_the_last_edits_line_else_mentions():
    ops = ["block", "num_warps", "num_stages"]
    assert chosen_edits("blah block\nEDITS: num_stages, num_warps", ops) == ["num_stages", "num_warps"]
    assert chosen_edits("I would raise num_warps, then the block size", ops) == ["num_warps", "block"]
    assert chosen_edits("nothing useful", ops) == []
    assert chosen_edits("EDITS: nonsense", ops) == []


def _ctx(n=3, seed=0):
    p = get_problem("L1/01_softmax")
    parent = ZooGenerator().seeds(p)[0]
    return GenerationContext(problem=p, parent=parent, n=n, rng=random.Random(seed), seen=set())


def test_children_apply_the_chosen_edits_and_record_the_answer():
    client = FixedAnswers("Fewer warps suit this row size.\nEDITS: num_warps, num_stages")
    gen = LLMGuidedGenerator(client)
    ctx = _ctx(n=3)
    kids = gen.children(ctx)
    assert len(kids) == 3 and len({k.id for k in kids}) == 3
    for k in kids:
        assert validate_source(k.source) is None and k.parent_id == ctx.parent.id
        assert k.origin.startswith("llm-guided:fixed:mutation:num_")
        info = gen.generation_info(k.id)
        assert info["answer"].startswith("Fewer warps") and info["shared_by"] == 3
        assert (info["prompt_tokens"], info["completion_tokens"], info["seconds"]) == (120, 30, 0.5)
        assert info["edits"] == ["num_warps", "num_stages"]
    prompt = client.prompts[0][1]["content"]
    assert "- num_warps:" in prompt and ctx.parent.source.strip()[:60] in prompt


def test_an_answer_naming_no_edit_or_a_failed_call_is_one_failed_generation():
    gen = LLMGuidedGenerator(FixedAnswers("I like turtles"))
    out = gen.children(_ctx())
    assert len(out) == 1 and isinstance(out[0], FailedGeneration)
    assert out[0].raw == "I like turtles" and out[0].completion_tokens == 30

    class Down:
        model = "down"

        def chat(self, messages, **kw):
            raise ConnectionError("refused")

    out = LLMGuidedGenerator(Down()).children(_ctx())
    assert len(out) == 1 and "chat call failed" in out[0].reason and "refused" in out[0].reason
