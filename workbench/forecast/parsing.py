"""Turn a model's answer into a forecast over the 8 speedup bins.

Two kinds of answer:

- structured: the arguments of the forced `submit_forecast` tool call (or a JSON answer
  produced under `response_format`), an object with `probabilities` (an object keyed by
  bin number 1..8 or bin name, or a list of 8 numbers), `predicted_bin` and `reasoning`.
  The GPU Forecasters study's answer format is read too: flat fields, one probability per
  named bin (`p_severe_slowdown` ... `p_extreme_speedup`, `STUDY_BIN_NAMES`, with or without
  the `p_` prefix), a stated `predicted_bin` (1..8 or a bin name) and `reasoning`, as the
  arguments of its `submit_kernel_runtime_estimate` tool call or as plain JSON. A whole tool
  call object ({"name", "arguments"}, or {"function": {...}}) is unwrapped;
- free text: the fallback parser looks for, in order, a JSON object anywhere in the text,
  a bracketed list of 8 numbers, and "bin 5: 0.3" / "5: 30%" style entries.

Units, the same rule on every path: a value written with "%" is a percentage; an answer that
marks some non-zero values with "%" and not others is refused. Unmarked values are fractions
when none exceeds 1, and percentages when some does and they sum to 50..150; other unmarked
values above 1 are not probabilities and are refused. Probabilities are renormalised to sum to
1 and the sum as given (in fraction units) is kept as `raw_sum`, a health signal. A bin an
object leaves out counts as 0. Entries of free text ("4: 0.3") that do not say "bin" must
look like probabilities (a fraction up to 1 or a percentage) and may not carry a unit (ms,
threads, x, ...), so prose with numbers in it is not read as a forecast. Anything unusable (no
numbers, wrong count, a negative or non-finite value, a non-finite or zero sum, mixed units)
gives an abstention that carries the reason. The functions here never raise on any input.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Mapping

from workbench import bins
from workbench.records import Forecast, ParseStatus

TOOL_NAME = "submit_forecast"
#: The tool the GPU Forecasters study's models call; its arguments are read as well.
STUDY_TOOL_NAME = "submit_kernel_runtime_estimate"
#: The study's names of bins 1..8 (index 0..7), as its flat answer fields use them (`p_<name>`).
STUDY_BIN_NAMES: tuple[str, ...] = (
    "severe_slowdown", "significant_slowdown", "moderate_slowdown", "minor_slowdown",
    "minor_speedup", "significant_speedup", "high_speedup", "extreme_speedup")
_NAME_INDEX = {n: i for i, n in enumerate(STUDY_BIN_NAMES)}

#: JSON schema of a structured answer. Probabilities come first so a truncated answer
#: (max_tokens reached inside the reasoning) still holds them.
FORECAST_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "probabilities": {
            "type": "object",
            "description": "Probability (0 to 1) that the speedup falls in each bin; the 8 values sum to 1.",
            "properties": {str(i): {"type": "number"} for i in range(1, bins.N_BINS + 1)},
            "required": [str(i) for i in range(1, bins.N_BINS + 1)],
        },
        "predicted_bin": {"type": "integer", "description": "The most likely bin, 1 to 8."},
        "reasoning": {"type": "string", "description": "One to three sentences."},
    },
    "required": ["probabilities", "predicted_bin", "reasoning"],
}

#: The forced tool of the structured path, in the OpenAI `tools` shape.
SUBMIT_FORECAST_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": TOOL_NAME,
        "description": "Submit the speedup forecast for the candidate kernel.",
        "parameters": FORECAST_SCHEMA,
    },
}
#: `tool_choice` value that forces the call.
FORCE_TOOL_CHOICE: dict[str, Any] = {"type": "function", "function": {"name": TOOL_NAME}}
#: `response_format` value for servers with JSON-schema constrained output.
RESPONSE_FORMAT: dict[str, Any] = {
    "type": "json_schema",
    "json_schema": {"name": "forecast", "schema": FORECAST_SCHEMA},
}

MAX_REASONING_CHARS = 2000
# A sum in this range with some value above 1 is read as percentages.
_PERCENT_SUM_RANGE = (50.0, 150.0)


@dataclass(frozen=True)
class ParsedAnswer:
    """The outcome of parsing one answer.

    When `status` is ABSTAINED, `probabilities` is empty and `reason` says why. Otherwise
    `probabilities` has 8 non-negative values summing to 1 (index 0..7 = bins 1..8),
    `raw_sum` is the sum as given (fractions), `stated_bin` the model's predicted bin
    index (0..7) or None, and `notes` lists anything odd that was tolerated.
    """

    status: ParseStatus
    probabilities: tuple[float, ...] = ()
    raw_sum: float = 0.0
    stated_bin: int | None = None
    reasoning: str = ""
    reason: str = ""
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.status is not ParseStatus.ABSTAINED

    def to_forecast(self, forecaster: str, candidate_id: str, problem_id: str,
                    hardware_key: str, relative_to: str = "reference", **cost: Any) -> Forecast:
        """A Forecast record (an abstention carrying `reason` when parsing failed).

        `cost` takes the Forecast cost fields: prompt_tokens, completion_tokens, seconds.
        """
        if not self.ok:
            return Forecast.abstention(forecaster, candidate_id, problem_id, hardware_key,
                                       reason=f"unparseable answer: {self.reason}",
                                       relative_to=relative_to, **cost)
        return Forecast(forecaster=forecaster, candidate_id=candidate_id, problem_id=problem_id,
                        hardware_key=hardware_key, probabilities=self.probabilities,
                        relative_to=relative_to, reasoning=self.reasoning, raw_sum=self.raw_sum,
                        parse_status=self.status, stated_bin=self.stated_bin, **cost)


def _fail(reason: str) -> ParsedAnswer:
    return ParsedAnswer(status=ParseStatus.ABSTAINED, reason=reason)


class _Bad(Exception):
    """Internal: a value that disqualifies a candidate answer (message = reason)."""


# ----------------------------------------------------------------------------- numbers
def _number(v: Any) -> tuple[float, bool]:
    """(value, given_as_percent) from a JSON value; raises _Bad for anything else."""
    if isinstance(v, bool) or v is None:
        raise _Bad(f"not a number: {v!r}")
    if isinstance(v, (int, float)):
        x, pct = float(v), False
    elif isinstance(v, str):
        s = v.strip()
        pct = s.endswith("%")
        try:
            x = float(s.rstrip("%").strip())
        except ValueError:
            raise _Bad(f"not a number: {v!r}") from None
    else:
        raise _Bad(f"not a number: {type(v).__name__}")
    if not math.isfinite(x):
        raise _Bad(f"non-finite probability {v!r}")
    if x < 0:
        raise _Bad(f"negative probability {v!r}")
    return x, pct


def _normalise(values: list[tuple[float, bool]]) -> tuple[tuple[float, ...], float, tuple[str, ...]]:
    """Fractions summing to 1, the raw sum in fraction units, notes (units: module doc).
    Raises _Bad."""
    notes: list[str] = []
    xs = [x for x, _ in values]
    marked = [p for x, p in values if x != 0]
    total = sum(xs)  # not fsum: it raises on an overflowing sum instead of returning inf
    if not math.isfinite(total):
        raise _Bad("the probabilities sum to a non-finite value")
    if any(marked) and not all(marked):
        raise _Bad("some probabilities are percentages and some are not")
    if any(marked):
        percent = True
    elif max(xs) > 1.0:
        if not _PERCENT_SUM_RANGE[0] <= total <= _PERCENT_SUM_RANGE[1]:
            raise _Bad(f"values above 1 that sum to {total:.4g}, not about 100: not probabilities")
        percent = True
    else:
        percent = False
    if percent:
        xs = [x / 100.0 for x in xs]
        total = sum(xs)
        notes.append("read as percentages")
    if not total > 0:
        raise _Bad("all probabilities are zero")
    if abs(total - 1.0) > 0.05:
        notes.append(f"probabilities summed to {total:.3g}; renormalised")
    return tuple(x / total for x in xs), total, tuple(notes)


_BIN_KEY = re.compile(r"^\s*(?:bin[\s_#-]*)?([0-9]+)\s*$", re.IGNORECASE)


def _name_index(v: str) -> int | None:
    """Bin index 0..7 of a study bin name ("minor_speedup", "p_minor_speedup", "Minor speedup")."""
    key = re.sub(r"[\s-]+", "_", v.strip().lower())
    return _NAME_INDEX.get(key[2:] if key.startswith("p_") else key)


def _bin_index(v: Any) -> int | None:
    """Bin index 0..7 from a stated bin (5, "5", "bin 5", "minor_speedup"); None if not a
    valid bin."""
    if isinstance(v, bool):
        return None
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if isinstance(v, int):
        return v - 1 if 1 <= v <= bins.N_BINS else None
    if isinstance(v, str):
        m = _BIN_KEY.match(v)
        if m:
            n = int(m.group(1))
            return n - 1 if 1 <= n <= bins.N_BINS else None
        return _name_index(v)
    return None


def _probabilities(obj: Any) -> list[tuple[float, bool]]:
    """8 (value, percent) pairs from a list of 8 or an object keyed by bin. Raises _Bad."""
    if isinstance(obj, (list, tuple)):
        if len(obj) != bins.N_BINS:
            raise _Bad(f"expected {bins.N_BINS} probabilities, got a list of {len(obj)}")
        return [_number(v) for v in obj]
    if isinstance(obj, Mapping):
        out: list[tuple[float, bool]] = [(0.0, False)] * bins.N_BINS
        seen = set()
        for k, v in obj.items():
            idx = _bin_index(k)
            if idx is None:
                raise _Bad(f"unknown bin key {k!r} (bins are 1..{bins.N_BINS})")
            out[idx] = _number(v)
            seen.add(idx)
        if not seen:
            raise _Bad("empty probabilities object")
        return out
    raise _Bad(f"probabilities must be a list or an object, got {type(obj).__name__}")


# ----------------------------------------------------------------------------- structured
def _from_object(obj: Any) -> ParsedAnswer:
    """Parse a decoded JSON answer. Raises _Bad with the reason when unusable."""
    if not isinstance(obj, Mapping):
        raise _Bad(f"answer is a {type(obj).__name__}, not an object")
    notes: list[str] = []
    lower = {str(k).lower(): v for k, v in obj.items()}
    probs = None
    for key in ("probabilities", "probs", "distribution", "bins", "probability"):
        if key in lower:
            probs = lower[key]
            break
    if probs is None:
        # Flat fields keyed by bins: {"1": 0.1, ..., "8": 0.0} or the study's
        # {"p_severe_slowdown": 0.01, ..., "p_extreme_speedup": 0.05}
        bin_keys = {k: v for k, v in obj.items() if _bin_index(k) is not None}
        if not bin_keys:
            call = _tool_call_arguments(lower)
            if call is not None:
                return _from_object(call)
            raise _Bad("no 'probabilities' field")
        probs = bin_keys
    values = _probabilities(probs)
    p, raw, more = _normalise(values)
    notes.extend(more)
    stated = None
    for key in ("predicted_bin", "predicted", "bin", "prediction"):
        if key in lower:
            stated = _bin_index(lower[key])
            if stated is None:
                notes.append(f"ignored invalid predicted_bin {lower[key]!r}")
            break
    if stated is not None and p[stated] < max(p):
        notes.append(f"stated bin {stated + 1} is not the most probable bin")
    reasoning = lower.get("reasoning", lower.get("explanation", ""))
    reasoning = reasoning if isinstance(reasoning, str) else json.dumps(reasoning)
    return ParsedAnswer(status=ParseStatus.OK, probabilities=p, raw_sum=raw, stated_bin=stated,
                        reasoning=reasoning.strip()[:MAX_REASONING_CHARS], notes=tuple(notes))


def _tool_call_arguments(lower: Mapping[str, Any]) -> Any:
    """The decoded arguments of a whole tool-call object ({"name", "arguments"} or
    {"function": {"name", "arguments"}}), or None when `lower` is not one."""
    call = lower.get("function") if isinstance(lower.get("function"), Mapping) else lower
    args = call.get("arguments") if isinstance(call, Mapping) else None
    if isinstance(args, (str, bytes)):
        try:
            return json.loads(args)
        except (ValueError, RecursionError):
            raise _Bad("the tool call's arguments are not valid JSON") from None
    return args if isinstance(args, Mapping) else None


def parse_structured(answer: str | Mapping[str, Any]) -> ParsedAnswer:
    """Parse the tool-call arguments (a JSON string or a decoded object). Never raises."""
    try:
        obj = json.loads(answer) if isinstance(answer, (str, bytes)) else answer
    except (ValueError, RecursionError) as e:
        return _fail(f"tool arguments are not valid JSON ({e})")
    try:
        return _from_object(obj)
    except _Bad as e:
        return _fail(str(e))
    except Exception as e:  # noqa: BLE001 - the contract is "never raises"
        return _fail(f"parser error {type(e).__name__}: {e}")


# ----------------------------------------------------------------------------- free text
_NUM = r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|-?\.\d+|nan|NaN|inf"
# "bin 5: 0.3", "Bin #5 = 30%", "\"5\": 0.3", "5: 0.3". The number must not be the start of
# a bin label ("3: 0.5-0.71x", "6: 1.41-2x"), so it may not be followed by "x" or "-digit".
# A number followed by a unit is a measurement, not a probability.
_UNIT = (r"(?!\s*(?:[mun\u00b5]?s|secs?|seconds?|[kmgt]i?b|[gtp]?flops|threads?|blocks?|warps?"
         r"|bytes?|times|elements?|cycles?|regs?|registers?)\b)")
_ENTRY = re.compile(
    r"(?<![\w.])\"?(bin[\s_#]*)?([1-8])\"?(?:\s*\([^)\n]*\))?\s*[:=]\s*\"?"
    r"(" + _NUM + r")" + _UNIT + r"\s*(%)?\"?(?![\d.]|\s*x\b|x|\s*-\s*\d)",
    re.IGNORECASE)
_LIST = re.compile(r"\[([^\[\]]*)\]")
_PREDICTED = re.compile(r"predicted[\s_]*bin\"?\s*(?:is|[:=])?\s*\"?(?:bin\s*)?(\d+)", re.IGNORECASE)


def _json_objects(text: str):
    """Every JSON object decodable from some '{' in `text`, outermost first."""
    dec = json.JSONDecoder()
    i = text.find("{")
    while i != -1:
        try:
            obj, end = dec.raw_decode(text, i)
        except ValueError:
            i = text.find("{", i + 1)
            continue
        yield obj
        i = text.find("{", end)


def _stated_from_text(text: str) -> int | None:
    m = _PREDICTED.search(text)
    return _bin_index(int(m.group(1))) if m else None


def parse_text(text: str) -> ParsedAnswer:
    """The fallback parser for free text. Status FALLBACK, or ABSTAINED with the reason."""
    try:
        return _parse_text(text if isinstance(text, str) else str(text))
    except Exception as e:  # noqa: BLE001 - the contract is "never raises"
        return _fail(f"parser error {type(e).__name__}: {e}")


def _parse_text(text: str) -> ParsedAnswer:
    if not text or not text.strip():
        return _fail("empty answer")
    reasons: list[str] = []
    # 1. a JSON object anywhere (fenced or not)
    for obj in _json_objects(text):
        try:
            got = _from_object(obj)
        except _Bad as e:
            reasons.append(str(e))
            continue
        return _as_fallback(got, "from a JSON object in the text")
    # 2. a bracketed list of exactly 8 numbers
    for m in _LIST.finditer(text):
        items = [s.strip().strip("\"'") for s in m.group(1).split(",") if s.strip()]
        if len(items) != bins.N_BINS:
            continue
        try:
            values = [_number(s) for s in items]
            p, raw, notes = _normalise(values)
        except _Bad as e:
            reasons.append(str(e))
            continue
        return ParsedAnswer(status=ParseStatus.FALLBACK, probabilities=p, raw_sum=raw,
                            stated_bin=_stated_from_text(text), reasoning=_reasoning_of(text),
                            notes=notes + ("from a list of 8 numbers",))
    # 3. "bin N: p" entries; the last mention of a bin wins, unmentioned bins count as 0. An
    # entry without "bin" counts only when its value looks like a probability.
    found: dict[int, tuple[str, bool]] = {}
    for m in _ENTRY.finditer(text):
        said_bin, pct = bool(m.group(1)), bool(m.group(4))
        if not (said_bin or pct or _at_most_one(m.group(3))):
            continue
        found[int(m.group(2)) - 1] = (m.group(3), pct)
    if len(found) >= 2:
        try:
            values = [(0.0, False)] * bins.N_BINS
            for idx, (num, pct) in found.items():
                x, _ = _number(num)
                values[idx] = (x, pct)
            p, raw, notes = _normalise(values)
        except _Bad as e:
            return _fail(str(e))
        missing = bins.N_BINS - len(found)
        extra = (f"{missing} bins not mentioned, taken as 0",) if missing else ()
        return ParsedAnswer(status=ParseStatus.FALLBACK, probabilities=p, raw_sum=raw,
                            stated_bin=_stated_from_text(text), reasoning=_reasoning_of(text),
                            notes=notes + extra + ("from 'bin: probability' entries",))
    if reasons:
        return _fail("; ".join(dict.fromkeys(reasons)))
    return _fail("no probabilities found in the text")


def _at_most_one(num: str) -> bool:
    try:
        return float(num) <= 1.0
    except ValueError:
        return False


def _as_fallback(got: ParsedAnswer, how: str) -> ParsedAnswer:
    return ParsedAnswer(status=ParseStatus.FALLBACK, probabilities=got.probabilities,
                        raw_sum=got.raw_sum, stated_bin=got.stated_bin, reasoning=got.reasoning,
                        notes=got.notes + (how,))


_REASONING = re.compile(r"reasoning\"?\s*[:=]\s*\"?([^\n\"]+)", re.IGNORECASE)


def _reasoning_of(text: str) -> str:
    m = _REASONING.search(text)
    if m:
        return m.group(1).strip()[:MAX_REASONING_CHARS]
    return text.strip()[:MAX_REASONING_CHARS]


# ----------------------------------------------------------------------------- entry point
def parse_answer(text: str | None = None, tool_arguments: str | None = None) -> ParsedAnswer:
    """Parse a model answer: tool-call arguments first (status OK), then the text (FALLBACK).

    Malformed tool arguments (e.g. truncated JSON) are handed to the fallback parser too.
    Returns an ABSTAINED answer with every reason when nothing is usable. Never raises.
    """
    reasons = []
    if tool_arguments is not None:
        got = parse_structured(tool_arguments)
        if got.ok:
            return got
        reasons.append(f"tool call: {got.reason}")
        rescued = parse_text(tool_arguments)
        if rescued.ok:
            return rescued
    if text is not None and text.strip():
        got = parse_text(text)
        if got.ok:
            return got
        reasons.append(f"text: {got.reason}")
    if not reasons:
        return _fail("the model returned neither a tool call nor text")
    return _fail("; ".join(reasons))
