"""The LLM forecaster: a chat model behind an OpenAI-compatible server.

One forecast = one prompt (see `workbench.forecast.prompts`) and, by default, one forced
`submit_forecast` tool call. When the server rejects tools, or the model answers in text
instead of calling the tool, the text is parsed by the fallback parser (parse status
"fallback"); when the text is empty too, the question is asked again without tools.
A server that cannot be reached, times out or keeps failing gives an abstention carrying
the reason: one bad item never stops a batch. Forecasts are cached in a
`workbench.forecast.cache.ForecastCache` by (forecaster name, prompt hash); that cache keeps
no abstentions, so an item that failed is asked again next time.
"""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Sequence

from workbench.errors import ConfigError
from workbench.forecast.base import Forecaster
from workbench.forecast.cache import ForecastCache
from workbench.forecast.parsing import (FORCE_TOOL_CHOICE, STUDY_TOOL_NAME, SUBMIT_FORECAST_TOOL,
                                        TOOL_NAME, ParsedAnswer, parse_answer)
from workbench.forecast.prompts import (DEFAULT_MAX_SOURCE_CHARS, RELATIVE_TO, PromptSet,
                                        prompt_hash)
from workbench.records import Candidate, Forecast, Hardware, Problem

if TYPE_CHECKING:  # the chat client (openai) is imported only by LLMForecaster itself, so the
    # local forecaster and the RL scripts run where openai is not installed
    from workbench.llm import ChatClient, ChatResult


def check_batch_args(items: Sequence[tuple[Problem, Candidate]], relative_to: str,
                     parents: Sequence[Candidate | None] | None) -> list[Candidate | None]:
    """The parents of a `forecast_batch` call, one per item (None where absent), after checking
    the call: one parent per item, a known `relative_to`, and a parent for every item when
    forecasting relative to the parent. Raises ConfigError saying what to pass otherwise.
    Shared by every prompted forecaster's `forecast_batch`."""
    out = list(parents) if parents is not None else [None] * len(items)
    if len(out) != len(items):
        raise ConfigError(f"{len(items)} items but {len(out)} parents: pass one "
                          "parent (or None) per item")
    if relative_to not in RELATIVE_TO:
        raise ConfigError(f"relative_to must be one of {RELATIVE_TO}, got {relative_to!r}")
    if relative_to == "parent" and any(p is None for p in out):
        raise ConfigError("relative_to='parent' needs a parent for every item: pass parents=")
    return out


class PromptedForecaster(Forecaster):
    """Shared machinery of forecasters driven by the prompt templates: build the prompt,
    look up the cache, ask the model (`_ask`), store the answer.

    Subclasses implement `_ask(messages) -> (ParsedAnswer, cost)` and may raise
    the exceptions listed in `no_answer_errors` for transport failures (turned into uncached
    abstentions; `LLMForecaster` lists `LLMError`).
    """

    name: str
    no_answer_errors: tuple[type[Exception], ...] = ()

    def __init__(self, name: str, prompt: str | PromptSet = "default",
                 max_source_chars: int = DEFAULT_MAX_SOURCE_CHARS,
                 cache: ForecastCache | None = None):
        self.name = name
        self.prompts = prompt if isinstance(prompt, PromptSet) else PromptSet.load(prompt)
        self.max_source_chars = max_source_chars
        self.cache: ForecastCache = cache if cache is not None else ForecastCache()
        self.calls = 0  # model calls made (cache hits do not count)
        self._calls_lock = threading.Lock()

    @property
    def prompt_id(self) -> str:
        return self.prompts.id

    def _settings(self) -> dict[str, Any]:
        """Generation settings that change the answer: part of the cache key."""
        return {}

    def messages(self, problem: Problem, candidate: Candidate, hardware: Hardware,
                 parent: Candidate | None = None, relative_to: str = "reference") -> list[dict[str, str]]:
        """The rendered chat messages for one forecast (useful to inspect or to train on)."""
        return self.prompts.messages(problem, candidate, hardware, parent=parent,
                                     relative_to=relative_to, max_source_chars=self.max_source_chars)

    def _lookup(self, problem: Problem, candidate: Candidate, hardware: Hardware,
                parent: Candidate | None, relative_to: str
                ) -> tuple[dict[str, Any], list[dict[str, str]], str, Forecast | None]:
        """(the forecast's ids, the rendered messages, the cache key, the cached forecast with
        these ids or None): the part of a forecast that needs no model."""
        ids = dict(candidate_id=candidate.id, problem_id=problem.id, hardware_key=hardware.key,
                   relative_to=relative_to)
        messages = self.messages(problem, candidate, hardware, parent=parent,
                                 relative_to=relative_to)
        key = prompt_hash(messages, hardware_key=hardware.key, **self._settings())
        hit = self.cache.get(self.name, key)
        return ids, messages, key, (hit.replace(**ids) if hit is not None else None)

    def forecast(self, problem: Problem, candidate: Candidate, hardware: Hardware,
                 parent: Candidate | None = None, relative_to: str = "reference") -> Forecast:
        ids, messages, key, hit = self._lookup(problem, candidate, hardware, parent, relative_to)
        if hit is not None:
            return hit
        with self._calls_lock:
            self.calls += 1
        try:
            parsed, cost = self._ask(messages)
        except self.no_answer_errors as e:
            return Forecast.abstention(self.name, reason=f"no answer: {e}", **ids)
        f = parsed.to_forecast(self.name, **ids, **cost)
        self.cache.put(self.name, key, f)
        return f

    def _ask(self, messages: list[dict[str, str]]) -> tuple[ParsedAnswer, dict[str, Any]]:
        raise NotImplementedError


class LLMForecaster(PromptedForecaster):
    """Forecasts with a chat model reached through `ChatClient`.

    `name` defaults to "llm:<model>". `use_tools=False` skips the tool call and asks for a
    JSON answer in text. `max_tokens` bounds each answer; `temperature` 0 is greedy.
    `forecast_batch` runs items on threads; the client's `max_concurrency` bounds how many
    requests are in flight.
    """

    def __init__(self, client: ChatClient, name: str | None = None,
                 prompt: str | PromptSet = "default", use_tools: bool = True,
                 max_tokens: int = 512, temperature: float = 0.0,
                 max_source_chars: int = DEFAULT_MAX_SOURCE_CHARS,
                 cache: ForecastCache | None = None):
        super().__init__(name or f"llm:{client.model}", prompt=prompt,
                         max_source_chars=max_source_chars, cache=cache)
        self.client = client
        self.use_tools = use_tools
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.tools_supported: bool | None = None  # learned from the server on first use
        from workbench.llm import LLMError
        self.no_answer_errors = (LLMError,)

    def _settings(self) -> dict[str, Any]:
        return {"model": self.client.model, "tools": self.use_tools,
                "max_tokens": self.max_tokens, "temperature": self.temperature}

    def _ask(self, messages: list[dict[str, str]]) -> tuple[ParsedAnswer, dict[str, Any]]:
        from workbench.llm import LLMRequestError

        results: list[ChatResult] = []
        parsed: ParsedAnswer | None = None
        if self.use_tools and self.tools_supported is not False:
            try:
                r = self.client.chat(messages, tools=[SUBMIT_FORECAST_TOOL],
                                     tool_choice=FORCE_TOOL_CHOICE, max_tokens=self.max_tokens,
                                     temperature=self.temperature)
            except LLMRequestError:
                # The server rejects tools (or this tool schema): ask in text from now on.
                self.tools_supported = False
            else:
                self.tools_supported = True
                results.append(r)
                args = next((c.arguments for c in r.tool_calls
                             if c.name in (TOOL_NAME, STUDY_TOOL_NAME)), None)
                if args is None and r.tool_calls:  # misnamed tool: still try its arguments
                    args = r.tool_calls[0].arguments
                if args is not None or r.text.strip():
                    parsed = parse_answer(text=r.text, tool_arguments=args)
        if parsed is None:
            r = self.client.chat(messages, max_tokens=self.max_tokens,
                                 temperature=self.temperature)
            results.append(r)
            parsed = parse_answer(text=r.text)
        cost = {"prompt_tokens": sum(r.prompt_tokens for r in results),
                "completion_tokens": sum(r.completion_tokens for r in results),
                "seconds": sum(r.seconds for r in results)}
        return parsed, cost

    def forecast_batch(self, items: Sequence[tuple[Problem, Candidate]], hardware: Hardware,
                       relative_to: str = "reference",
                       parents: Sequence[Candidate | None] | None = None) -> list[Forecast]:
        """Forecasts for many items, concurrently, in input order; never raises per item."""
        parents = check_batch_args(items, relative_to, parents)

        def one(i: int) -> Forecast:
            (problem, cand), parent = items[i], parents[i]
            try:
                return self.forecast(problem, cand, hardware, parent=parent, relative_to=relative_to)
            except Exception as e:  # noqa: BLE001 - one bad item must not sink the batch
                return Forecast.abstention(self.name, cand.id, problem.id, hardware.key,
                                           reason=f"forecast failed: {type(e).__name__}: {e}",
                                           relative_to=relative_to)

        if len(items) <= 1:
            return [one(i) for i in range(len(items))]
        with ThreadPoolExecutor(max_workers=min(self.client.max_concurrency, len(items)),
                                thread_name_prefix="llm-forecast") as pool:
            return list(pool.map(one, range(len(items))))
