"""A compact on-policy GRPO step for a PEFT model, for runs that must fit a fixed time.

`grpo_step` is one optimizer step of GRPO as `workbench.rl.train` configures TRL (one update
per generation batch, so the policy ratio is 1 and PPO clipping never acts; KL coefficient 0;
the "dapo" loss: summed over completion tokens, divided by the number of tokens in the batch;
advantages normalised within each prompt's group): for each prompt, `generations` answers
are sampled, scored by the reward function, and the advantage of each answer is its reward
minus its group's mean, divided by the group's standard deviation (+1e-4). Groups whose rewards
are all equal are dropped from the loss and counted (`frac_groups_dropped`). It exists beside
the TRL trainer so that several rewards can be stepped in turn under one deadline with the
same prompts and the same sampling seed at every step (benchmarks/rl_warmstart.py), with torch,
transformers and peft only.
"""
from __future__ import annotations

import math
import time
from typing import Any, Callable, Sequence

import numpy as np

from workbench.errors import ConfigError
from workbench.spec.target import Target
from workbench.rl.rewards import constant_groups, parse_completions


def _left_pad(seqs: Sequence[list[int]], pad: int):
    import torch

    width = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), width), pad, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for r, s in enumerate(seqs):
        ids[r, width - len(s):] = torch.tensor(s, dtype=torch.long)
        mask[r, width - len(s):] = 1
    return ids, mask


def grpo_step(model: Any, tokenizer: Any, optimizer: Any, prompt_ids: Sequence[list[int]],
              measured_bins: Sequence[int], reward: Callable[..., list], generations: int = 8,
              max_new_tokens: int = 128, temperature: float = 1.0, seed: int = 0,
              device: str = "cpu", max_grad_norm: float = 1.0) -> dict[str, Any]:
    """One GRPO step (module doc) on tokenised prompts; returns the step's statistics:
    reward (mean over all answers), reward_std, parse_rate, frac_groups_dropped,
    completion_clipped_ratio (share of answers that hit `max_new_tokens` without EOS),
    mean_completion_tokens, loss, grad_norm, seconds (generate_s, train_s)."""
    import torch

    if generations < 2:
        raise ConfigError("GRPO needs at least 2 generations per prompt")
    if len(prompt_ids) != len(measured_bins) or not prompt_ids:
        raise ConfigError("one measured bin per prompt, at least one prompt")
    t0 = time.time()
    pad = int(tokenizer.pad_token_id if tokenizer.pad_token_id is not None
              else tokenizer.eos_token_id)
    eos = int(tokenizer.eos_token_id)
    rep = [p for p in prompt_ids for _ in range(generations)]
    ids, mask = _left_pad(rep, pad)
    ids, mask = ids.to(device), mask.to(device)
    width = ids.shape[1]
    model.eval()
    torch.manual_seed(seed)
    use_amp = Target.local(device).cuda
    if use_amp:
        torch.cuda.manual_seed_all(seed)
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16, enabled=use_amp):
        out = model.generate(input_ids=ids, attention_mask=mask, do_sample=True,
                             temperature=temperature, top_p=1.0, top_k=0,
                             max_new_tokens=max_new_tokens, pad_token_id=pad)
    gen_s = time.time() - t0
    comp = out[:, width:].tolist()
    lengths, clipped, texts = [], [], []
    for c in comp:
        n = next((k + 1 for k, t in enumerate(c) if t == eos), None)
        clipped.append(n is None)
        n = len(c) if n is None else n
        lengths.append(n)
        texts.append(tokenizer.decode(c[:n], skip_special_tokens=True))
    y = [int(b) for b in measured_bins for _ in range(generations)]
    r = np.asarray(reward(texts, measured_bin=y), dtype=float)
    parsed = [p.ok for p in parse_completions(texts)]
    const = constant_groups(r.tolist(), generations)
    g = r.reshape(-1, generations)
    adv = (g - g.mean(axis=1, keepdims=True)) / (g.std(axis=1, keepdims=True) + 1e-4)
    keep = np.repeat(~np.asarray(const), generations)
    stats: dict[str, Any] = {
        "reward": float(r.mean()), "reward_std": float(r.std()),
        "parse_rate": float(np.mean(parsed)), "frac_groups_dropped": float(np.mean(const)),
        "completion_clipped_ratio": float(np.mean(clipped)),
        "mean_completion_tokens": float(np.mean(lengths)), "loss": 0.0, "grad_norm": 0.0}
    t1 = time.time()
    rows = np.flatnonzero(keep)
    if rows.size:
        model.train()
        full = out[rows]                       # (k, width + new) left-padded prompt + answer
        new = full.shape[1] - width
        attn = torch.cat([mask[rows], torch.zeros_like(out[rows, width:])], dim=1)
        tok_mask = torch.zeros_like(full, dtype=torch.float32)
        for j, i in enumerate(rows.tolist()):
            attn[j, width:width + lengths[i]] = 1
            tok_mask[j, width:width + lengths[i]] = 1.0
        a = torch.tensor(adv.ravel()[rows], dtype=torch.float32, device=device)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=use_amp):
            # logits of the last new + 1 positions only: position j predicts token j + 1
            logits = model(input_ids=full, attention_mask=attn,
                           logits_to_keep=new + 1).logits[:, :-1].float()
        logp = torch.log_softmax(logits / temperature, dim=-1).gather(
            -1, full[:, width:].unsqueeze(-1)).squeeze(-1)
        m = tok_mask[:, width:]
        ratio = torch.exp(logp - logp.detach())  # 1 on-policy; carries the policy gradient
        loss = -(ratio * a[:, None] * m).sum() / m.sum().clamp(min=1.0)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        params = [p for p in model.parameters() if p.requires_grad]
        gn = float(torch.nn.utils.clip_grad_norm_(params, max_grad_norm))
        finite = math.isfinite(gn) and math.isfinite(float(loss.detach()))
        if finite:
            optimizer.step()
        else:  # a non-finite gradient would turn every weight into NaN: the step is skipped
            optimizer.zero_grad(set_to_none=True)
        stats["skipped_nonfinite"] = not finite
        model.eval()
        stats["loss"] = float(loss.detach())
        stats["grad_norm"] = gn if math.isfinite(gn) else None
    stats["generate_s"] = round(gen_s, 3)
    stats["train_s"] = round(time.time() - t1, 3)
    stats["seconds"] = round(time.time() - t0, 3)
    return stats
