"""A small, thread-safe client for OpenAI-compatible chat servers.

Works with vLLM, SGLang, the llama.cpp server (`python -m llama_cpp.server`), Ollama and
hosted APIs. It adds what the workbench needs on top of the `openai` package:

- retries with exponential backoff on connection errors, timeouts, 5xx and 429 answers
  (a 4xx answer is raised at once as `LLMRequestError`: retrying cannot fix the request);
- a concurrency limit shared by every thread that uses one client;
- cumulative accounting of requests, tokens and seconds (`ChatClient.usage`).

Configuration from the environment: `ChatClient.from_env()` reads WORKBENCH_LLM_BASE_URL,
WORKBENCH_LLM_MODEL and WORKBENCH_LLM_API_KEY.
"""
from __future__ import annotations

import json
import os
import random
import threading
import time
from dataclasses import dataclass
from typing import Any, Mapping, NamedTuple, Sequence

import openai

from workbench.llm.errors import (LLMConfigError, LLMRequestError, LLMServerError,
                                  LLMUnreachableError)

ENV_BASE_URL = "WORKBENCH_LLM_BASE_URL"
ENV_MODEL = "WORKBENCH_LLM_MODEL"
ENV_API_KEY = "WORKBENCH_LLM_API_KEY"

#: Sent when no key is configured: local servers ignore it, the openai package needs one.
_NO_KEY = "no-key"


class ToolCall(NamedTuple):
    """One tool call of an answer: the function name and its arguments as a JSON string."""

    name: str
    arguments: str


@dataclass(frozen=True)
class ChatResult:
    """One chat completion.

    `tool_calls` is empty when the model answered in text. Token counts are the server's
    (0 when it reports none); `seconds` is wall time of the successful attempt only.
    `finish_reason` is the server's ("stop", "length", "tool_calls", ...) or "".
    """

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    finish_reason: str = ""
    model: str = ""
    attempts: int = 1

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class Usage:
    """Cumulative accounting of one client.

    `requests` counts chat calls that returned a result, `failures` those that raised,
    `retries` the extra attempts made; `seconds` is the summed wall time of every attempt.
    """

    requests: int = 0
    failures: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


_RETRYABLE = (openai.APIConnectionError, openai.InternalServerError, openai.RateLimitError)


class ChatClient:
    """Chat completions against one model on one OpenAI-compatible server.

    `base_url` ends in `/v1` for most servers (e.g. "http://127.0.0.1:8080/v1").
    `timeout_s` bounds one attempt; a call makes at most `1 + max_retries` attempts, sleeping
    `backoff_s * 2**attempt` (plus up to 25% jitter) between them. At most `max_concurrency`
    requests are in flight at once across all threads sharing this client. Safe to share
    between threads.
    """

    def __init__(self, base_url: str | None, model: str | None, api_key: str | None = None,
                 timeout_s: float = 60.0, max_retries: int = 2, max_concurrency: int = 4,
                 backoff_s: float = 0.5):
        if not base_url or not str(base_url).strip():
            raise LLMConfigError(
                f"no LLM server configured: pass base_url= or set {ENV_BASE_URL}, "
                "e.g. http://127.0.0.1:8080/v1 for a local llama.cpp or vLLM server")
        base_url = str(base_url).strip().rstrip("/")
        if not base_url.startswith(("http://", "https://")):
            raise LLMConfigError(
                f"base_url {base_url!r} must start with http:// or https://, "
                "e.g. http://127.0.0.1:8080/v1")
        if not model or not str(model).strip():
            raise LLMConfigError(
                f"no model name: pass model= or set {ENV_MODEL}; "
                "`ChatClient.list_models(base_url)` shows what a server offers")
        if not timeout_s or timeout_s <= 0:
            raise LLMConfigError(f"timeout_s must be > 0 seconds, got {timeout_s!r}")
        if max_retries < 0:
            raise LLMConfigError(f"max_retries must be >= 0, got {max_retries!r}")
        if max_concurrency < 1:
            raise LLMConfigError(f"max_concurrency must be >= 1, got {max_concurrency!r}")
        self.base_url = base_url
        self.model = str(model).strip()
        self.timeout_s = float(timeout_s)
        self.max_retries = int(max_retries)
        self.max_concurrency = int(max_concurrency)
        self.backoff_s = float(backoff_s)
        self._api_key = api_key or _NO_KEY
        # Retries are ours (so they are counted and bounded the same way on every server).
        self._openai = openai.OpenAI(base_url=self.base_url, api_key=self._api_key,
                                     timeout=self.timeout_s, max_retries=0)
        self._slots = threading.BoundedSemaphore(self.max_concurrency)
        self._lock = threading.Lock()
        self._usage = Usage()

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_env(cls, **overrides: Any) -> "ChatClient":
        """A client configured from WORKBENCH_LLM_BASE_URL / _MODEL / _API_KEY.

        Keyword arguments override the environment (and set the other constructor options).
        """
        kw: dict[str, Any] = {
            "base_url": os.environ.get(ENV_BASE_URL),
            "model": os.environ.get(ENV_MODEL),
            "api_key": os.environ.get(ENV_API_KEY),
        }
        kw.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**kw)

    @staticmethod
    def list_models(base_url: str, api_key: str | None = None, timeout_s: float = 10.0) -> list[str]:
        """Model ids a server offers (GET {base_url}/models). Raises LLMUnreachableError."""
        c = openai.OpenAI(base_url=base_url.rstrip("/"), api_key=api_key or _NO_KEY,
                          timeout=timeout_s, max_retries=0)
        try:
            return [m.id for m in c.models.list()]
        except openai.APIConnectionError as e:
            raise LLMUnreachableError(
                f"cannot reach {base_url} ({type(e).__name__}); is the server running?") from e

    def __repr__(self) -> str:
        return f"ChatClient(base_url={self.base_url!r}, model={self.model!r})"

    # ------------------------------------------------------------------ accounting
    @property
    def usage(self) -> Usage:
        """A snapshot of the cumulative accounting."""
        with self._lock:
            return self._usage

    def _account(self, **delta: float) -> None:
        with self._lock:
            u = self._usage
            self._usage = Usage(**{k: getattr(u, k) + delta.get(k, 0) for k in
                                   ("requests", "failures", "retries", "prompt_tokens",
                                    "completion_tokens", "seconds")})

    # ------------------------------------------------------------------ the call
    def chat(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] | None = None,
             tool_choice: str | Mapping[str, Any] | None = None,
             response_format: Mapping[str, Any] | None = None, max_tokens: int = 512,
             temperature: float = 0.0, **extra: Any) -> ChatResult:
        """One chat completion; blocks while `max_concurrency` other calls are in flight.

        `tools`, `tool_choice` and `response_format` are passed through in the OpenAI shape;
        `extra` goes to the server as extra body fields (e.g. `seed`, `top_p`).
        Raises LLMUnreachableError, LLMServerError (after retries) or LLMRequestError (at once).
        """
        kwargs: dict[str, Any] = {"model": self.model, "messages": list(messages),
                                  "max_tokens": int(max_tokens), "temperature": float(temperature)}
        if tools:
            kwargs["tools"] = list(tools)
        if tool_choice is not None:
            kwargs["tool_choice"] = tool_choice
        if response_format is not None:
            kwargs["response_format"] = dict(response_format)
        if extra:
            kwargs["extra_body"] = dict(extra)
        last: Exception | None = None
        for attempt in range(self.max_retries + 1):
            if attempt:
                self._account(retries=1)
                delay = self.backoff_s * 2 ** (attempt - 1)
                time.sleep(delay * (1 + 0.25 * random.random()))
            t0 = time.perf_counter()
            try:
                with self._slots:
                    t0 = time.perf_counter()
                    resp = self._openai.chat.completions.create(**kwargs)
            except _RETRYABLE as e:
                self._account(seconds=time.perf_counter() - t0)
                last = e
                continue
            except openai.APIStatusError as e:
                self._account(seconds=time.perf_counter() - t0, failures=1)
                raise LLMRequestError(
                    f"{self.base_url} rejected the request with HTTP {e.status_code}: "
                    f"{_short(e.message)}; check the model name ({self.model!r}) and the "
                    "request options (tools, response_format) this server supports",
                    status_code=e.status_code) from e
            seconds = time.perf_counter() - t0
            result = _to_result(resp, seconds, attempt + 1)
            self._account(requests=1, seconds=seconds, prompt_tokens=result.prompt_tokens,
                          completion_tokens=result.completion_tokens)
            return result
        self._account(failures=1)
        tries = self.max_retries + 1
        if isinstance(last, (openai.InternalServerError, openai.RateLimitError)):
            raise LLMServerError(
                f"{self.base_url} kept failing (HTTP {last.status_code}) after {tries} attempts: "
                f"{_short(last.message)}; the server may be overloaded, try later or lower "
                "max_concurrency") from last
        what = "timed out" if isinstance(last, openai.APITimeoutError) else "could not be reached"
        raise LLMUnreachableError(
            f"{self.base_url} {what} after {tries} attempts (timeout {self.timeout_s:g}s each); "
            f"check that the server is running and the URL is right, or raise timeout_s") from last


def _short(text: Any, n: int = 300) -> str:
    s = str(text)
    return s if len(s) <= n else s[:n] + "..."


def _to_result(resp: Any, seconds: float, attempts: int) -> ChatResult:
    """Convert an openai ChatCompletion into a ChatResult (tolerant of partial answers)."""
    choices = getattr(resp, "choices", None) or []
    text, calls, finish = "", [], ""
    if choices:
        choice = choices[0]
        finish = str(getattr(choice, "finish_reason", "") or "")
        msg = getattr(choice, "message", None)
        if msg is not None:
            text = msg.content or ""
            for tc in getattr(msg, "tool_calls", None) or []:
                fn = getattr(tc, "function", None)
                if fn is None:
                    continue
                args = fn.arguments
                if not isinstance(args, str):  # some servers send an object
                    args = json.dumps(args)
                calls.append(ToolCall(name=fn.name or "", arguments=args or ""))
    usage = getattr(resp, "usage", None)
    return ChatResult(
        text=text, tool_calls=tuple(calls),
        prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        seconds=seconds, finish_reason=finish, model=str(getattr(resp, "model", "") or ""),
        attempts=attempts)
