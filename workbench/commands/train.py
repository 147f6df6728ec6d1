"""`workbench train`: GRPO + LoRA training of a forecaster on measured speedups."""
from __future__ import annotations

from pathlib import Path

from workbench.errors import ConfigError


def register(sub) -> None:
    p = sub.add_parser(
        "train", help="RL-train a chat model as a forecaster (GRPO with LoRA)",
        description="Fine-tune a chat model with GRPO (TRL) and a LoRA adapter (PEFT) to forecast "
        "speedup bins. Prompts are the forecaster's prompts for the ok measurements of one GPU; "
        "one fold of problems (--folds/--fold) is held out and never trained on. Rewards: "
        "correctness (predicted bin == measured bin), brier (correctness + 1 - Brier), crps "
        "(correctness + 1 - ordinal CRPS); an unparsable answer scores 0. Prompt groups whose "
        "rewards are all equal are dropped from the loss. Writes the adapter, checkpoint-N "
        "folders, train_log.json and train_config.json to --out; load the adapter with "
        "LocalTransformersForecaster(MODEL, gguf_file=..., adapter_path=OUT).")
    p.add_argument("--reward", choices=("correctness", "brier", "crps"), default="brier")
    p.add_argument("--model", required=True, help="model directory or Hugging Face hub id")
    p.add_argument("--gguf-file", help="GGUF file inside --model (dequantised on load)")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--steps", type=int, default=20, help="optimizer steps (default 20)")
    p.add_argument("--prompts-per-step", type=int, default=8)
    p.add_argument("--generations", type=int, default=8, help="answers sampled per prompt")
    p.add_argument("--max-completion-tokens", type=int, default=256)
    p.add_argument("--max-source-chars", type=int, default=12_000,
                   help="cut each source shown in a prompt to this many characters")
    p.add_argument("--prompt", default="default", help="prompt set name (default, compact, ...)")
    p.add_argument("--train-rows", type=int, default=None,
                   help="use at most this many training prompts (default: all)")
    p.add_argument("--gpu", default="h100", help="GPU key of the measurements (default h100)")
    p.add_argument("--source", help="shipped-layout directory (default: kernels_cache/shipped, or "
                   "the database with --db)")
    p.add_argument("--folds", type=int, default=5, help="problem folds; one is held out")
    p.add_argument("--fold", type=int, default=0, help="the held-out fold (default 0)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--lr", type=float, default=4e-5, help="learning rate (default 4e-5)")
    p.add_argument("--lora-rank", type=int, default=32)
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--beta", type=float, default=0.0, help="KL coefficient (default 0)")
    p.add_argument("--save-steps", type=int, default=10, help="checkpoint every N steps")
    p.add_argument("--device", default="cpu", help="cpu or cuda (default cpu)")
    p.add_argument("--keep-constant-groups", action="store_true",
                   help="keep constant-reward groups in the loss (TRL's plain behaviour)")
    p.set_defaults(handler=_train)


def _source(args):
    if args.source:
        return Path(args.source)
    if getattr(args, "db", None):
        from workbench.commands.common import db_path
        from workbench.store import Store

        path = db_path(args)
        if not path.exists():
            raise ConfigError(f"no database at {path}; drop --db to use the shipped data")
        return Store(path)
    return None


def _train(args) -> int:
    from workbench.rl import data
    from workbench.rl.train import TrainConfig, train

    rows = data.load_rows(_source(args), gpu=args.gpu)
    train_rows, held = data.split_by_problem(rows, folds=args.folds, fold=args.fold, seed=args.seed)
    train_rows = data.sample_rows(train_rows, args.train_rows, seed=args.seed)
    ds = data.to_dataset(data.examples(train_rows, prompt=args.prompt,
                                       max_source_chars=args.max_source_chars))
    print(f"training on {len(ds)} prompts from {len({r[0].id for r in train_rows})} problems; "
          f"{len({r[0].id for r in held})} problems held out")
    config = TrainConfig(model=args.model, gguf_file=args.gguf_file, out=args.out,
                         reward=args.reward, steps=args.steps,
                         prompts_per_step=args.prompts_per_step, generations=args.generations,
                         max_completion_tokens=args.max_completion_tokens,
                         learning_rate=args.lr, lora_rank=args.lora_rank,
                         lora_alpha=2 * args.lora_rank, temperature=args.temperature,
                         beta=args.beta, seed=args.seed, device=args.device,
                         save_steps=args.save_steps,
                         drop_constant_groups=not args.keep_constant_groups)
    result = train(config, ds)
    last = next((h for h in reversed(result.log_history) if "reward" in h), {})
    print(f"adapter: {result.adapter_dir} ({len(result.checkpoints)} checkpoints); last step: "
          f"reward {last.get('reward', float('nan')):.3f}, "
          f"groups dropped {last.get('frac_groups_dropped', float('nan')):.2f}")
    return 0
