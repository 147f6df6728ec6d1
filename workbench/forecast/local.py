"""A forecaster that runs a chat model in this process with transformers.

Same prompts as the LLM forecaster (`workbench.forecast.prompts`); the model answers in
text (greedy decoding) and the fallback parser reads it, so parse statuses are "fallback"
or "abstained". Loads a Hugging Face model directory or hub id, a GGUF file inside one
(`gguf_file=`, dequantised by transformers; needs the `gguf` package), and optionally a
PEFT LoRA adapter on top (`adapter_path=`, needs `peft`), which is how RL-trained
forecasters are served. `from_model` wraps a model already in memory (e.g. during training).
`forecast_batch` answers many prompts per `generate` call (left-padded batches of `batch_size`).
"""
from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, Sequence

from workbench.errors import ConfigError
from workbench.forecast.cache import ForecastCache
from workbench.forecast.llm import PromptedForecaster, check_batch_args
from workbench.forecast.parsing import ParsedAnswer, parse_answer
from workbench.forecast.prompts import DEFAULT_MAX_SOURCE_CHARS, PromptSet
from workbench.records import Candidate, Forecast, Hardware, Problem


def _import_transformers():
    try:
        import transformers  # noqa: F401
    except ImportError as e:
        raise ConfigError("the local forecaster needs transformers: "
                          "`.venv/bin/pip install transformers gguf` (or the `llm` extra)") from e
    return transformers


class LocalTransformersForecaster(PromptedForecaster):
    """Forecasts with a transformers causal LM on `device` ("cpu", "cuda", "cuda:1", ...).

    `name` defaults to "local:<model name>[+<adapter dir name>]". `max_new_tokens` bounds
    each answer (tokens). `batch_size` is how many prompts `forecast_batch` sends to one
    `generate` call. Calls are serialised by a lock (one model, one generate at a time).
    """

    def __init__(self, model_path_or_id: str | Path, gguf_file: str | None = None,
                 adapter_path: str | Path | None = None, device: str = "cpu",
                 name: str | None = None, prompt: str | PromptSet = "default",
                 max_new_tokens: int = 384, max_source_chars: int = DEFAULT_MAX_SOURCE_CHARS,
                 cache: ForecastCache | None = None, torch_dtype: Any = None,
                 batch_size: int = 16):
        transformers = _import_transformers()
        src = str(model_path_or_id)
        load_kw: dict[str, Any] = {}
        if gguf_file:
            load_kw["gguf_file"] = gguf_file
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(src, **load_kw)
            model_kw = dict(load_kw)
            if torch_dtype is not None:
                model_kw["dtype"] = torch_dtype
            model = transformers.AutoModelForCausalLM.from_pretrained(src, **model_kw)
        except (OSError, ValueError, ImportError) as e:
            raise ConfigError(f"cannot load model {src!r}"
                              f"{f' (gguf_file={gguf_file!r})' if gguf_file else ''}: {e}; pass a "
                              "model directory or hub id, and the GGUF file name inside it") from e
        if adapter_path is not None:
            model = _load_adapter(model, adapter_path)
        default = f"local:{Path(gguf_file).stem if gguf_file else Path(src).name}"
        if adapter_path is not None:
            default += f"+{Path(adapter_path).name}"
        self._init(model, tokenizer, name or default, device, prompt, max_new_tokens,
                   max_source_chars, cache, batch_size)
        self.model_source = src
        self.gguf_file = gguf_file
        self.adapter_path = str(adapter_path) if adapter_path is not None else None

    @classmethod
    def from_model(cls, model: Any, tokenizer: Any, name: str, device: str = "cpu",
                   adapter_path: str | Path | None = None, prompt: str | PromptSet = "default",
                   max_new_tokens: int = 384, max_source_chars: int = DEFAULT_MAX_SOURCE_CHARS,
                   cache: ForecastCache | None = None,
                   batch_size: int = 16) -> "LocalTransformersForecaster":
        """Wrap a model and tokenizer already loaded (e.g. a policy being trained).

        With `adapter_path`, the LoRA adapter is loaded onto `model` (PEFT changes the
        model's modules in place: pass a copy to keep the base model untouched).
        """
        if adapter_path is not None:
            model = _load_adapter(model, adapter_path)
        self = cls.__new__(cls)
        self._init(model, tokenizer, name, device, prompt, max_new_tokens, max_source_chars, cache,
                   batch_size)
        self.model_source, self.gguf_file = name, None
        self.adapter_path = str(adapter_path) if adapter_path is not None else None
        return self

    def _init(self, model, tokenizer, name, device, prompt, max_new_tokens, max_source_chars,
              cache, batch_size) -> None:
        if int(batch_size) < 1:
            raise ConfigError(f"batch_size must be at least 1, got {batch_size}")
        PromptedForecaster.__init__(self, name, prompt=prompt, max_source_chars=max_source_chars,
                                    cache=cache)
        if getattr(tokenizer, "chat_template", None) is None:
            raise ConfigError(f"{name}: the tokenizer has no chat template; use an instruct/chat "
                              "model (e.g. SmolLM2-135M-Instruct)")
        self.device = device
        self.model = model.to(device)
        self.model.eval()
        self.tokenizer = tokenizer
        self.max_new_tokens = max_new_tokens
        self.batch_size = int(batch_size)
        self._generate_lock = threading.Lock()

    def _settings(self) -> dict[str, Any]:
        return {"max_new_tokens": self.max_new_tokens}

    def generate(self, messages: list[dict[str, str]]) -> tuple[str, int, int, float]:
        """Greedy answer to `messages`: (text, prompt tokens, new tokens, seconds)."""
        [(answer, n_prompt, n_new)], seconds = self.generate_batch([self._prompt_ids(messages)])
        return answer, n_prompt, n_new, seconds

    def _pad_id(self) -> int:
        pad = self.tokenizer.pad_token_id
        return int(pad if pad is not None else self.tokenizer.eos_token_id)

    def _eos_ids(self) -> set[int]:
        """Token ids that end an answer: the generation config's EOS ids, else the tokenizer's."""
        eos = getattr(getattr(self.model, "generation_config", None), "eos_token_id", None)
        if eos is None:
            eos = self.tokenizer.eos_token_id
        ids = eos if isinstance(eos, (list, tuple)) else [eos]
        return {int(i) for i in ids if i is not None}

    def _prompt_ids(self, messages: list[dict[str, str]]) -> list[int]:
        text = self.tokenizer.apply_chat_template(messages, tokenize=False,
                                                  add_generation_prompt=True)
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def generate_batch(self, prompts: Sequence[list[int]]
                       ) -> tuple[list[tuple[str, int, int]], float]:
        """Greedy answers to already tokenised prompts in one left-padded `generate` call.

        Returns ([(text, prompt tokens, new tokens up to and including EOS)], seconds of the
        call). Prompt tokens are each prompt's own, unpadded count.
        """
        import torch

        if not prompts:
            return [], 0.0
        pad = self._pad_id()
        width = max(len(p) for p in prompts)
        ids = torch.full((len(prompts), width), pad, dtype=torch.long)
        mask = torch.zeros((len(prompts), width), dtype=torch.long)
        for row, p in enumerate(prompts):  # left padding: the answers start in one column
            ids[row, width - len(p):] = torch.tensor(p, dtype=torch.long)
            mask[row, width - len(p):] = 1
        ids, mask = ids.to(self.device), mask.to(self.device)
        with self._generate_lock, torch.inference_mode():
            t0 = time.perf_counter()
            out = self.model.generate(input_ids=ids, attention_mask=mask,
                                      max_new_tokens=self.max_new_tokens, do_sample=False,
                                      pad_token_id=pad)
            seconds = time.perf_counter() - t0
        eos = self._eos_ids()
        answers = []
        for row, p in enumerate(prompts):
            new = out[row, width:].tolist()
            n_new = next((k + 1 for k, t in enumerate(new) if t in eos), len(new))
            answers.append((self.tokenizer.decode(new[:n_new], skip_special_tokens=True),
                            len(p), n_new))
        return answers, seconds

    def forecast_batch(self, items: Sequence[tuple[Problem, Candidate]], hardware: Hardware,
                       relative_to: str = "reference",
                       parents: Sequence[Candidate | None] | None = None) -> list[Forecast]:
        """Forecasts for many items, in input order; never raises per item.

        Cache hits are answered without the model, exactly as `forecast` would (same key);
        the rest are sorted by prompt length and generated greedily in batches of
        `batch_size`. Each forecast's `seconds` is its batch's generate time divided evenly
        over the batch; its token counts are its own. A batch whose `generate` fails is retried
        one item at a time, so a failure costs only the items that fail (abstentions with the
        reason, not cached).
        """
        parents = check_batch_args(items, relative_to, parents)
        out: list[Forecast | None] = [None] * len(items)
        todo: list[tuple[int, dict[str, Any], str, list[int]]] = []  # (index, ids, key, tokens)
        for i, ((problem, cand), parent) in enumerate(zip(items, parents)):
            ids = dict(candidate_id=cand.id, problem_id=problem.id, hardware_key=hardware.key,
                       relative_to=relative_to)
            try:
                ids, messages, key, hit = self._lookup(problem, cand, hardware, parent, relative_to)
                if hit is not None:
                    out[i] = hit
                    continue
                todo.append((i, ids, key, self._prompt_ids(messages)))
            except Exception as e:  # noqa: BLE001 - one bad item must not sink the batch
                out[i] = Forecast.abstention(self.name, reason=_failed(e), **ids)
        todo.sort(key=lambda t: len(t[3]))
        with self._calls_lock:
            self.calls += len(todo)
        for start in range(0, len(todo), self.batch_size):
            chunk = todo[start:start + self.batch_size]
            try:
                answers, seconds = self.generate_batch([t[3] for t in chunk])
                results: list[Any] = [(a, seconds / len(chunk)) for a in answers]
            except Exception:  # noqa: BLE001 - retried item by item below
                results = []
                for t in chunk:
                    try:
                        (a,), s = self.generate_batch([t[3]])
                        results.append((a, s))
                    except Exception as e:  # noqa: BLE001
                        results.append(e)
            for (i, ids, key, _), res in zip(chunk, results):
                if isinstance(res, Exception):
                    out[i] = Forecast.abstention(self.name, reason=_failed(res), **ids)
                    continue
                (text, n_prompt, n_new), seconds = res
                f = parse_answer(text=text).to_forecast(
                    self.name, **ids, prompt_tokens=n_prompt, completion_tokens=n_new,
                    seconds=seconds)
                self.cache.put(self.name, key, f)
                out[i] = f
        return out  # type: ignore[return-value]

    def _ask(self, messages: list[dict[str, str]]) -> tuple[ParsedAnswer, dict[str, Any]]:
        text, n_prompt, n_new, seconds = self.generate(messages)
        return parse_answer(text=text), {"prompt_tokens": n_prompt, "completion_tokens": n_new,
                                         "seconds": seconds}


def _failed(e: BaseException) -> str:
    return f"forecast failed: {type(e).__name__}: {e}"


def _load_adapter(model: Any, adapter_path: str | Path) -> Any:
    try:
        import peft
    except ImportError as e:
        raise ConfigError("loading a LoRA adapter needs peft: `.venv/bin/pip install peft` "
                          "(or the `rl` extra)") from e
    path = Path(adapter_path)
    if not (path / "adapter_config.json").is_file():
        raise ConfigError(f"{path} is not a PEFT adapter directory (no adapter_config.json); "
                          "pass the folder written by `model.save_pretrained(...)`")
    try:
        return peft.PeftModel.from_pretrained(model, str(path))
    except (RuntimeError, ValueError, KeyError) as e:  # shapes or modules of another model
        raise ConfigError(f"the adapter {path} does not fit this model ({type(e).__name__}: "
                          f"{str(e)[:300]}); load it on the model it was trained from") from e
