"""Supervised warm start: teach a small chat model the forecast answer format before GRPO.

A base SmolLM2-135M almost never writes an answer the parser reads, so every GRPO reward is 0
and every group is dropped (benchmarks/results/rl-h100.log). The warm start fine-tunes a LoRA
adapter on training-problem rows whose target answer is the forecast format:

    {"probabilities": {"1": 0.02, ..., "8": 0.0}, "predicted_bin": 5, "reasoning": "..."}

with a short reasoning (`MAX_REASONING_CHARS`) and a distribution given per row by the caller:
`benchmarks/rl_warmstart.py` passes the learned forecaster's out-of-fold distribution
(distillation; docs/rl.md says why), `smoothed_bin` is the other choice. The loss is the
next-token cross-entropy of the answer tokens only (the prompt is context).
"""
from __future__ import annotations

import json
import math
import random
import time
from typing import Any, Callable, Sequence

import numpy as np

from workbench import bins
from workbench.errors import ConfigError
from workbench.spec.target import Target

#: Longest reasoning kept in a target answer (characters).
MAX_REASONING_CHARS = 160
#: The modules LoRA adapts (all linear layers of a Llama block).
LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def round_probabilities(p: Sequence[float], decimals: int = 2) -> list[float]:
    """`p` rounded to `decimals` so that the rounded values still sum to 1 (the remainder goes
    to the largest value)."""
    a = np.clip(np.asarray(p, dtype=float), 0.0, None)
    if a.size != bins.N_BINS or not np.isfinite(a).all() or a.sum() <= 0:
        raise ConfigError(f"a target distribution has {bins.N_BINS} non-negative values with a "
                          "positive sum")
    a = a / a.sum()
    scale = 10 ** decimals
    r = np.floor(a * scale + 0.5)
    r[int(np.argmax(a))] += scale - r.sum()
    if r.min() < 0:  # rounding pushed the top value under zero: impossible for sums near 1
        r = np.clip(r, 0, None)
        r[int(np.argmax(r))] += scale - r.sum()
    return [float(x) / scale for x in r]


def smoothed_bin(true_bin: int, width: float = 0.7) -> list[float]:
    """A distribution peaked at `true_bin` that decays over neighbouring bins
    (p_k proportional to exp(-|k - bin| / width))."""
    k = np.arange(bins.N_BINS)
    p = np.exp(-np.abs(k - int(true_bin)) / width)
    return list(p / p.sum())


def short_reasoning(text: str) -> str:
    """The first sentence of `text`, cut to `MAX_REASONING_CHARS` on a word boundary."""
    t = " ".join(str(text).split())
    for end in (". ", "; "):
        if end in t:
            t = t.split(end, 1)[0]
    if len(t) > MAX_REASONING_CHARS:
        t = t[:MAX_REASONING_CHARS].rsplit(" ", 1)[0]
    return t.rstrip(".") + "."


def target_answer(probabilities: Sequence[float], reasoning: str) -> str:
    """The answer text the warm start teaches: the compact prompt's JSON object."""
    p = round_probabilities(probabilities)
    probs = ", ".join(f'"{i + 1}": {v:.2f}' for i, v in enumerate(p))
    return ('{"probabilities": {' + probs + '}, "predicted_bin": '
            f"{int(np.argmax(p)) + 1}, \"reasoning\": {json.dumps(short_reasoning(reasoning))}}}")


def reasoning_for(probabilities: Sequence[float]) -> str:
    """The target answer's sentence for a distribution: its expected speedup and likeliest bin
    (one fixed sentence form)."""
    p = np.asarray(probabilities, dtype=float)
    expected = 2.0 ** float((p / p.sum()) @ np.asarray(bins.LOG2_MIDPOINTS))
    return (f"Expected speedup about {expected:.2g}x, most likely bin "
            f"{int(np.argmax(p)) + 1} ({bins.LABELS[int(np.argmax(p))]}).")


def lora_model(model: Any, rank: int = 16, alpha: int | None = None, seed: int = 0) -> Any:
    """`model` wrapped in a fresh trainable PEFT LoRA adapter over `LORA_TARGETS`."""
    try:
        import peft
        import torch
    except ImportError as e:
        raise ConfigError("the warm start needs peft and torch (the `llm` extra)") from e
    torch.manual_seed(seed)
    cfg = peft.LoraConfig(r=rank, lora_alpha=alpha or 2 * rank, lora_dropout=0.0,
                          target_modules=list(LORA_TARGETS), task_type="CAUSAL_LM")
    return peft.get_peft_model(model, cfg)


def encode(tokenizer: Any, prompt: list[dict[str, str]], answer: str) -> tuple[list[int], int]:
    """(token ids of prompt + answer + EOS, number of prompt tokens)."""
    text = tokenizer.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True)
    p = list(tokenizer(text, add_special_tokens=False)["input_ids"])
    a = list(tokenizer(answer, add_special_tokens=False)["input_ids"])
    return p + a + [int(tokenizer.eos_token_id)], len(p)


def sft(model: Any, tokenizer: Any, prompts: Sequence[list[dict[str, str]]],
        answers: Sequence[str], steps: int, batch_size: int = 16, lr: float = 2e-4,
        device: str = "cpu", seed: int = 0, deadline: float | None = None,
        log: Callable[[dict], None] | None = None) -> list[dict]:
    """Fine-tune the trainable parameters of `model` (a PEFT model) on (prompt, answer) pairs for
    `steps` AdamW steps of `batch_size` rows drawn with `seed` (an epoch at a time), loss on the
    answer tokens only; learning rate warmed up over 10% of the steps, then constant. Stops
    early at `deadline` (time.time()). Returns one log dict per step (also passed to `log`)."""
    import torch

    if steps < 1 or batch_size < 1 or len(prompts) != len(answers) or not prompts:
        raise ConfigError("sft needs steps >= 1, batch_size >= 1 and one answer per prompt")
    encoded = [encode(tokenizer, p, a) for p, a in zip(prompts, answers)]
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
    warm = max(1, steps // 10)
    rng = random.Random(seed)
    order: list[int] = []
    pad = int(tokenizer.pad_token_id if tokenizer.pad_token_id is not None
              else tokenizer.eos_token_id)
    model.train()
    history = []
    for step in range(steps):
        if deadline is not None and time.time() > deadline:
            break
        t0 = time.time()
        while len(order) < batch_size:
            more = list(range(len(encoded)))
            rng.shuffle(more)
            order += more
        idx, order = order[:batch_size], order[batch_size:]
        # left-padded, so every answer ends at the right edge and only the last `keep` positions
        # need logits (the vocabulary projection of the prompt would be most of the memory)
        width = max(len(encoded[i][0]) for i in idx)
        n_answer = max(len(encoded[i][0]) - encoded[i][1] for i in idx)
        ids = torch.full((len(idx), width), pad, dtype=torch.long)
        mask = torch.zeros((len(idx), width), dtype=torch.long)
        labels = torch.full((len(idx), n_answer), -100, dtype=torch.long)
        for row, i in enumerate(idx):
            seq, n_prompt = encoded[i]
            ids[row, width - len(seq):] = torch.tensor(seq)
            mask[row, width - len(seq):] = 1
            a = seq[n_prompt:]
            labels[row, n_answer - len(a):] = torch.tensor(a)
        for g in opt.param_groups:
            g["lr"] = lr * min(1.0, (step + 1) / warm)
        use_amp = Target.local(device).cuda
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=use_amp):
            out = model(input_ids=ids.to(device), attention_mask=mask.to(device),
                        logits_to_keep=n_answer + 1)
        logits = out.logits[:, :-1].float()  # position j predicts token j + 1
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                 labels.to(device).reshape(-1),
                                                 ignore_index=-100)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        gnorm = float(torch.nn.utils.clip_grad_norm_(params, 1.0))
        finite = math.isfinite(gnorm) and math.isfinite(float(loss.detach()))
        if finite:
            opt.step()
        else:  # a non-finite gradient (bf16 overflow) would turn every weight into NaN: skip it
            opt.zero_grad(set_to_none=True)
        rec = {"phase": "sft", "step": step + 1, "loss": float(loss.detach()),
               "grad_norm": gnorm if math.isfinite(gnorm) else None,
               "skipped_nonfinite": not finite,
               "lr": opt.param_groups[0]["lr"], "tokens": int(mask.sum()),
               "answer_tokens": int((labels != -100).sum()),
               "seconds": round(time.time() - t0, 3)}
        history.append(rec)
        if log is not None:
            log(rec)
    model.eval()
    return history
