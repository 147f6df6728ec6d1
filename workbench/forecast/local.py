"""A forecaster that runs a chat model in this process with transformers.

Same prompts as the LLM forecaster (`workbench.forecast.prompts`); the model answers in
text (greedy decoding) and the fallback parser reads it, so parse statuses are "fallback"
or "abstained". Loads a Hugging Face model directory or hub id, a GGUF file inside one
(`gguf_file=`, dequantised by transformers; needs the `gguf` package), and optionally a
PEFT LoRA adapter on top (`adapter_path=`, needs `peft`), which is how RL-trained
forecasters are served. `from_model` wraps a model already in memory (e.g. during training).
"""
from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from workbench.errors import ConfigError
from workbench.forecast.cache import ForecastCache
from workbench.forecast.llm import PromptedForecaster
from workbench.forecast.parsing import ParsedAnswer, parse_answer
from workbench.forecast.prompts import DEFAULT_MAX_SOURCE_CHARS, PromptSet


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
    each answer. Calls are serialised by a lock (one model, one generate at a time).
    """

    def __init__(self, model_path_or_id: str | Path, gguf_file: str | None = None,
                 adapter_path: str | Path | None = None, device: str = "cpu",
                 name: str | None = None, prompt: str | PromptSet = "default",
                 max_new_tokens: int = 384, max_source_chars: int = DEFAULT_MAX_SOURCE_CHARS,
                 cache: ForecastCache | None = None, torch_dtype: Any = None):
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
                   max_source_chars, cache)
        self.model_source = src
        self.gguf_file = gguf_file
        self.adapter_path = str(adapter_path) if adapter_path is not None else None

    @classmethod
    def from_model(cls, model: Any, tokenizer: Any, name: str, device: str = "cpu",
                   adapter_path: str | Path | None = None, prompt: str | PromptSet = "default",
                   max_new_tokens: int = 384, max_source_chars: int = DEFAULT_MAX_SOURCE_CHARS,
                   cache: ForecastCache | None = None) -> "LocalTransformersForecaster":
        """Wrap a model and tokenizer already loaded (e.g. a policy being trained).

        With `adapter_path`, the LoRA adapter is loaded onto `model` (PEFT changes the
        model's modules in place: pass a copy to keep the base model untouched).
        """
        if adapter_path is not None:
            model = _load_adapter(model, adapter_path)
        self = cls.__new__(cls)
        self._init(model, tokenizer, name, device, prompt, max_new_tokens, max_source_chars, cache)
        self.model_source, self.gguf_file = name, None
        self.adapter_path = str(adapter_path) if adapter_path is not None else None
        return self

    def _init(self, model, tokenizer, name, device, prompt, max_new_tokens, max_source_chars,
              cache) -> None:
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
        self._generate_lock = threading.Lock()

    def _settings(self) -> dict[str, Any]:
        return {"max_new_tokens": self.max_new_tokens}

    def generate(self, messages: list[dict[str, str]]) -> tuple[str, int, int, float]:
        """Greedy answer to `messages`: (text, prompt tokens, new tokens, seconds)."""
        import torch

        text = self.tokenizer.apply_chat_template(messages, tokenize=False,
                                                  add_generation_prompt=True)
        enc = self.tokenizer(text, return_tensors="pt", add_special_tokens=False).to(self.device)
        n_prompt = int(enc["input_ids"].shape[1])
        pad = self.tokenizer.pad_token_id
        if pad is None:
            pad = self.tokenizer.eos_token_id
        with self._generate_lock, torch.inference_mode():
            t0 = time.perf_counter()
            out = self.model.generate(**enc, max_new_tokens=self.max_new_tokens, do_sample=False,
                                      pad_token_id=pad)
            seconds = time.perf_counter() - t0
        new = out[0, n_prompt:]
        answer = self.tokenizer.decode(new, skip_special_tokens=True)
        return answer, n_prompt, int(new.shape[0]), seconds

    def _ask(self, messages: list[dict[str, str]]) -> tuple[ParsedAnswer, dict[str, Any]]:
        text, n_prompt, n_new, seconds = self.generate(messages)
        return parse_answer(text=text), {"prompt_tokens": n_prompt, "completion_tokens": n_new,
                                         "seconds": seconds}


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
    return peft.PeftModel.from_pretrained(model, str(path))
