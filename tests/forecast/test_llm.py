"""LLM forecaster, prompt templates and hardware table.

Two groups:
- against a REAL model (SmolLM2-135M-Instruct behind llama.cpp's OpenAI-compatible server,
  the `llm_server` fixture): end to end forecasts, token accounting, caching, text mode,
  relative_to="parent". Answer quality is not checked, only the contract.
- over real HTTP with scripted answers (`scripted_chat_server`) for the paths a small
  model cannot be made to take on demand: no tool support, text instead of a tool call,
  an empty answer, one item timing out, a dead server.
"""
from __future__ import annotations

import json
import math

import pytest

from workbench import bins
from workbench.errors import ConfigError
from workbench.forecast.hardware_table import render_hardware_table
from workbench.forecast.cache import ForecastCache
from workbench.forecast.llm import LLMForecaster
from workbench.forecast.prompts import PromptSet, available, truncate_source
from workbench.llm import ChatClient
from workbench.problems import get_problem
from workbench.records import Candidate, Forecast, Hardware, ParseStatus
from workbench.zoo import zoo_kernel

H100 = Hardware(key="h100", name="NVIDIA H100 80GB HBM3", compute_capability="9.0",
                sm_count=132, memory_mib=81559, l2_cache_mib=50.0, sm_clock_mhz=1980,
                mem_clock_mhz=2619, mem_bus_width_bits=5120, max_threads_per_sm=2048)

GOOD_ARGS = json.dumps({"probabilities": {"1": 0, "2": 0, "3": 0.1, "4": 0.2, "5": 0.4,
                                          "6": 0.2, "7": 0.1, "8": 0},
                        "predicted_bin": 5, "reasoning": "One pass over memory."})


def _zoo(problem_id: str, variant: str) -> Candidate:
    return zoo_kernel(problem_id, variant).candidate()


@pytest.fixture(scope="module")
def items() -> list[tuple]:
    softmax = get_problem("L1/01_softmax")
    relu = get_problem("L1/02_relu")
    return [(softmax, _zoo(softmax.id, "one_pass_row")),
            (relu, _zoo(relu.id, "flat_b1024_w4")),
            (relu, _zoo(relu.id, "slow_b32_w1"))]


def _check(f: Forecast, forecaster: str, problem_id: str, cand: Candidate) -> None:
    """The contract every forecast meets: a valid distribution or an abstention."""
    assert f.forecaster == forecaster and f.problem_id == problem_id
    assert f.candidate_id == cand.id and f.hardware_key == "h100"
    assert len(f.probabilities) == bins.N_BINS
    assert all(p >= 0 and math.isfinite(p) for p in f.probabilities)
    assert sum(f.probabilities) == pytest.approx(1.0)
    if f.abstained:
        assert f.reasoning, "an abstention must say why"
    else:
        assert f.parse_status in (ParseStatus.OK, ParseStatus.FALLBACK)
        assert f.raw_sum > 0


# ============================================================================ prompts
def test_prompt_set_id_is_name_plus_content_hash(tmp_path):
    ps = PromptSet.load("default")
    assert "default" in available()
    assert ps.id.startswith("default@") and len(ps.id.split("@")[1]) == 12
    assert PromptSet.load("default").id == ps.id
    for part in ("system", "user", "user_parent"):
        (tmp_path / f"mine.{part}.txt").write_text(getattr(ps, part))
    assert PromptSet.load("mine", tmp_path).id.split("@")[1] == ps.id.split("@")[1]
    (tmp_path / "mine.user.txt").write_text(ps.user + "\nBe brief.")
    assert PromptSet.load("mine", tmp_path).id != f"mine@{ps.id.split('@')[1]}"
    with pytest.raises(ConfigError, match="missing"):
        PromptSet.load("nonexistent", tmp_path)


def test_prompt_holds_task_code_hardware_bins_and_guide(items):
    problem, cand = items[0]
    system, user = PromptSet.load().messages(problem, cand, H100)
    assert system["role"] == "system" and user["role"] == "user"
    assert bins.table() in system["content"]
    for word in ("coalesc", "arithmetic intensity", "occupancy", "launch overhead",
                 "tensor cores", "divergent", "submit_forecast"):
        assert word.lower() in system["content"].lower()
    text = user["content"]
    assert problem.id in text and "torch.softmax" in text and "_softmax_row" in text
    for value in ("NVIDIA H100 80GB HBM3", "9.0", "132", "2048", "1980 MHz", "5120 bits"):
        assert value in text
    assert "PARENT" not in text and "$" not in text


def test_parent_prompt_asks_for_speedup_over_parent(items):
    problem, parent = items[1]
    _, cand = items[2]
    ps = PromptSet.load()
    _, user = ps.messages(problem, cand, H100, parent=parent, relative_to="parent")
    assert "over the PARENT kernel" in user["content"]
    assert parent.source.strip()[:200] in user["content"]
    assert cand.source.strip()[:200] in user["content"]
    with pytest.raises(ConfigError, match="parent"):
        ps.messages(problem, cand, H100, relative_to="parent")
    with pytest.raises(ConfigError, match="relative_to"):
        ps.messages(problem, cand, H100, relative_to="baseline")


def test_truncate_source_keeps_head_and_tail():
    src = "\n".join(f"line {i}" for i in range(1000))
    cut = truncate_source(src, 600)
    assert len(cut) < 700 and cut.startswith("line 0") and cut.endswith("line 999")
    assert "characters left out" in cut
    assert truncate_source("short", 600) == "short"


def test_hardware_table_leaves_out_unknown_fields():
    full = render_hardware_table(H100)
    assert "| Streaming multiprocessors (SMs) | 132 |" in full and "50 MiB" in full
    bare = render_hardware_table(Hardware(key="x", name="Mystery GPU"))
    assert "Mystery GPU" in bare and "SM" not in bare and "MHz" not in bare


# ============================================================================ real model
@pytest.fixture(scope="module")
def real_client(llm_server) -> ChatClient:
    # The session's server may have been started by an earlier file: it must still answer.
    import urllib.request

    try:
        with urllib.request.urlopen(f"{llm_server.base_url}/models", timeout=10):
            pass
    except OSError as e:
        tail = llm_server.log_path.read_text(errors="replace")[-2000:]
        pytest.fail(f"the session's llama.cpp server no longer answers ({e}); its log ends:\n{tail}")
    # A slow, shared CI machine must not turn into retries: one generous attempt.
    return ChatClient(llm_server.base_url, llm_server.model, timeout_s=600, max_retries=0,
                      max_concurrency=2)


@pytest.mark.slow
def test_real_model_end_to_end_with_tools(real_client, items):
    fc = LLMForecaster(real_client, max_tokens=160, max_source_chars=1500)
    assert fc.name == "llm:smollm2-135m"
    before = real_client.usage
    out = fc.forecast_batch(items[:2], H100)
    assert len(out) == 2
    for f, (problem, cand) in zip(out, items[:2]):
        _check(f, fc.name, problem.id, cand)
        assert f.prompt_tokens > 100 and f.completion_tokens > 0 and f.seconds > 0, f.reasoning
    after = real_client.usage
    assert after.requests >= before.requests + 2
    assert after.prompt_tokens - before.prompt_tokens == sum(f.prompt_tokens for f in out)
    assert fc.tools_supported is True  # llama.cpp accepts the forced tool call
    # A cached forecast costs no second call.
    calls, requests = fc.calls, real_client.usage.requests
    again = fc.forecast(*items[0], H100)
    assert (fc.calls, real_client.usage.requests) == (calls, requests)
    assert again.probabilities == out[0].probabilities and again.candidate_id == items[0][1].id


@pytest.mark.slow
def test_real_model_text_mode_and_parent(real_client, items):
    fc = LLMForecaster(real_client, use_tools=False, max_tokens=120, max_source_chars=1200)
    problem, parent = items[1]
    _, cand = items[2]
    f = fc.forecast(problem, cand, H100, parent=parent, relative_to="parent")
    _check(f, fc.name, problem.id, cand)
    assert f.relative_to == "parent"
    assert f.parse_status in (ParseStatus.FALLBACK, ParseStatus.ABSTAINED)
    assert f.prompt_tokens > 100 and f.completion_tokens > 0, f.reasoning
    assert fc.calls == 1


def test_dead_server_gives_abstentions_not_a_crash(free_port, items):
    client = ChatClient(f"http://127.0.0.1:{free_port}/v1", "gone", timeout_s=1,
                        max_retries=1, backoff_s=0.01)
    fc = LLMForecaster(client)
    out = fc.forecast_batch(items, H100)
    assert len(out) == len(items)
    for f, (problem, cand) in zip(out, items):
        _check(f, "llm:gone", problem.id, cand)
        assert f.abstained and "could not be reached" in f.reasoning
    assert len(fc.cache) == 0  # transport failures are not cached
    assert client.usage.failures == len(items)


# ============================================================================ scripted
def _tool_request(body: dict) -> bool:
    return bool(body.get("tools"))


def test_tool_answer_is_parsed_ok_and_cached(scripted_chat_server, items):
    srv_cls = scripted_chat_server
    with srv_cls(lambda n, b: (200, srv_cls.completion("", ("submit_forecast", GOOD_ARGS)), 0)) as srv:
        fc = LLMForecaster(ChatClient(srv.url, "m"))
        f = fc.forecast(*items[0], H100)
        assert f.parse_status is ParseStatus.OK and f.predicted_bin == 4
        assert f.reasoning == "One pass over memory."
        assert (f.prompt_tokens, f.completion_tokens) == (7, 3)
        body = srv.bodies[0]
        assert body["tool_choice"]["function"]["name"] == "submit_forecast"
        assert body["tools"][0]["function"]["parameters"]["required"][0] == "probabilities"
        fc.forecast(*items[0], H100)
        assert srv.count == 1
        # The cache persists: a new forecaster with the same name and prompt asks nothing.
        LLMForecaster(ChatClient(srv.url, "m"), cache=fc.cache).forecast(*items[0], H100)
        assert srv.count == 1
        # A different hardware is a different prompt: asked again.
        fc.forecast(*items[0], H100.replace(key="h200", name="NVIDIA H200"))
        assert srv.count == 2


def test_server_without_tool_support_falls_back_to_text(scripted_chat_server, items):
    srv_cls = scripted_chat_server

    def respond(n, body):
        if _tool_request(body):
            return 400, {"error": {"message": "tools are not supported"}}, 0
        return 200, srv_cls.completion("bin 4: 0.6\nbin 5: 0.4\nreasoning: memory bound"), 0

    with srv_cls(respond) as srv:
        fc = LLMForecaster(ChatClient(srv.url, "m"))
        f = fc.forecast(*items[0], H100)
        assert f.parse_status is ParseStatus.FALLBACK
        assert f.probabilities[3] == pytest.approx(0.6)
        assert fc.tools_supported is False and srv.count == 2
        fc.forecast(*items[1], H100)  # tools are not tried again
        assert srv.count == 3 and not _tool_request(srv.bodies[-1])


def test_text_instead_of_tool_call_is_parsed_without_a_second_request(scripted_chat_server, items):
    srv_cls = scripted_chat_server
    answer = "Sure! ```json\n" + GOOD_ARGS + "\n```"
    with srv_cls(lambda n, b: (200, srv_cls.completion(answer), 0)) as srv:
        f = LLMForecaster(ChatClient(srv.url, "m")).forecast(*items[0], H100)
        assert f.parse_status is ParseStatus.FALLBACK and srv.count == 1
        assert f.probabilities[4] == pytest.approx(0.4)


def test_empty_answer_is_asked_again_without_tools(scripted_chat_server, items):
    srv_cls = scripted_chat_server

    def respond(n, body):
        if _tool_request(body):
            return 200, srv_cls.completion(""), 0
        return 200, srv_cls.completion("[0, 0, 0, 0.5, 0.5, 0, 0, 0]"), 0

    with srv_cls(respond) as srv:
        f = LLMForecaster(ChatClient(srv.url, "m")).forecast(*items[0], H100)
        assert srv.count == 2 and f.parse_status is ParseStatus.FALLBACK
        assert (f.prompt_tokens, f.completion_tokens) == (14, 6)  # both calls are counted


def test_garbage_answer_is_an_abstention_and_is_asked_again(scripted_chat_server, items,
                                                            tmp_path):
    srv_cls = scripted_chat_server
    with srv_cls(lambda n, b: (200, srv_cls.completion("", ("submit_forecast", "{oops")), 0)) as srv:
        cache = ForecastCache(tmp_path / "cache.sqlite")
        fc = LLMForecaster(ChatClient(srv.url, "m"), cache=cache)
        f = fc.forecast(*items[0], H100)
        assert f.abstained and "unparseable" in f.reasoning and f.prompt_tokens == 7
        fc.forecast(*items[0], H100)
        assert srv.count == 2 and len(cache) == 0


def test_one_timing_out_item_does_not_sink_the_batch(scripted_chat_server, items):
    srv_cls = scripted_chat_server
    slow_marker = "BLOCK=32, num_warps=1"  # only the slow_b32_w1 candidate holds it
    assert slow_marker in items[2][1].source and slow_marker not in items[1][1].source

    def respond(n, body):
        user = body["messages"][-1]["content"]
        delay = 3.0 if slow_marker in user else 0.25  # overlap, but within the 1 s timeout
        return 200, srv_cls.completion("", ("submit_forecast", GOOD_ARGS)), delay

    with srv_cls(respond) as srv:
        client = ChatClient(srv.url, "m", timeout_s=1.0, max_retries=0, max_concurrency=3)
        out = LLMForecaster(client).forecast_batch(items, H100)
        assert [f.candidate_id for f in out] == [c.id for _, c in items]
        assert [f.abstained for f in out] == [False, False, True]
        assert "timed out" in out[2].reasoning
        assert srv.max_in_flight >= 2  # the batch ran concurrently


def test_batch_parent_mode_checks_parents(scripted_chat_server, items):
    srv_cls = scripted_chat_server
    with srv_cls(lambda n, b: (200, srv_cls.completion("", ("submit_forecast", GOOD_ARGS)), 0)) as srv:
        fc = LLMForecaster(ChatClient(srv.url, "m"))
        with pytest.raises(ConfigError, match="parent"):
            fc.forecast_batch(items[1:], H100, relative_to="parent")
        out = fc.forecast_batch(items[1:], H100, relative_to="parent",
                                parents=[items[2][1], items[1][1]])
        assert all(f.relative_to == "parent" and not f.abstained for f in out)
        assert all("over the PARENT kernel" in b["messages"][-1]["content"] for b in srv.bodies)
