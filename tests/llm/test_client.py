"""ChatClient: configuration errors, retries and timeouts, concurrency limit, accounting.

Transport behaviour is tested over real HTTP: a closed port, and small scripted stdlib
servers (a server that fails with 500 first, one that stalls, one that counts requests in
flight). Answers from a real model are tested in tests/forecast/test_llm.py.
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from workbench.errors import ConfigError, WorkbenchError
from workbench.llm import (ChatClient, LLMConfigError, LLMRequestError, LLMServerError,
                           LLMUnreachableError)
from workbench.llm.client import ENV_API_KEY, ENV_BASE_URL, ENV_MODEL

MESSAGES = [{"role": "user", "content": "hi"}]


# ----------------------------------------------------------------------------- config
def test_missing_base_url_or_model_is_a_config_error():
    with pytest.raises(LLMConfigError, match=ENV_BASE_URL):
        ChatClient(None, "m")
    with pytest.raises(LLMConfigError, match="http://"):
        ChatClient("localhost:8080", "m")
    with pytest.raises(LLMConfigError, match=ENV_MODEL):
        ChatClient("http://127.0.0.1:1/v1", "")
    with pytest.raises(LLMConfigError, match="max_concurrency"):
        ChatClient("http://127.0.0.1:1/v1", "m", max_concurrency=0)
    assert issubclass(LLMConfigError, ConfigError) and issubclass(LLMConfigError, WorkbenchError)


def test_from_env(monkeypatch):
    monkeypatch.delenv(ENV_BASE_URL, raising=False)
    monkeypatch.delenv(ENV_MODEL, raising=False)
    with pytest.raises(LLMConfigError, match=ENV_BASE_URL):
        ChatClient.from_env()
    monkeypatch.setenv(ENV_BASE_URL, "http://127.0.0.1:9/v1/")
    monkeypatch.setenv(ENV_MODEL, "qwen")
    monkeypatch.setenv(ENV_API_KEY, "secret")
    c = ChatClient.from_env(max_concurrency=3)
    assert c.base_url == "http://127.0.0.1:9/v1" and c.model == "qwen" and c.max_concurrency == 3
    assert ChatClient.from_env(model="other").model == "other"


# ----------------------------------------------------------------------------- transport
def test_closed_port_retries_then_raises_unreachable(free_port):
    c = ChatClient(f"http://127.0.0.1:{free_port}/v1", "m", timeout_s=2, max_retries=2,
                   backoff_s=0.05)
    t0 = time.perf_counter()
    with pytest.raises(LLMUnreachableError, match="3 attempts"):
        c.chat(MESSAGES)
    assert time.perf_counter() - t0 < 10
    u = c.usage
    assert u.retries == 2 and u.failures == 1 and u.requests == 0


def test_stalled_server_times_out_after_retries(scripted_chat_server):
    completion = scripted_chat_server.completion
    with scripted_chat_server(lambda n, b: (200, completion(), 3.0)) as srv:
        c = ChatClient(srv.url, "m", timeout_s=0.3, max_retries=1, backoff_s=0.01)
        t0 = time.perf_counter()
        with pytest.raises(LLMUnreachableError, match="timed out after 2 attempts"):
            c.chat(MESSAGES)
        assert time.perf_counter() - t0 < 2.5  # two 0.3 s attempts, not the 3 s stall
        assert srv.count == 2


def test_5xx_is_retried_then_succeeds_and_is_accounted(scripted_chat_server):
    completion = scripted_chat_server.completion
    def respond(n, body):
        return (500, {"error": {"message": "busy"}}, 0) if n == 1 else (200, completion("ok"), 0)

    with scripted_chat_server(respond) as srv:
        c = ChatClient(srv.url, "m", max_retries=2, backoff_s=0.01)
        r = c.chat(MESSAGES, max_tokens=5, seed=3)
        assert r.text == "ok" and r.attempts == 2
        assert r.prompt_tokens == 7 and r.completion_tokens == 3 and r.finish_reason == "stop"
        assert srv.bodies[-1]["max_tokens"] == 5 and srv.bodies[-1]["seed"] == 3
        u = c.usage
        assert (u.requests, u.retries, u.failures) == (1, 1, 0)
        assert u.prompt_tokens == 7 and u.total_tokens == 10 and u.seconds > 0


def test_persistent_5xx_raises_server_error(scripted_chat_server):
    completion = scripted_chat_server.completion
    with scripted_chat_server(lambda n, b: (503, {"error": {"message": "down"}}, 0)) as srv:
        c = ChatClient(srv.url, "m", max_retries=1, backoff_s=0.01)
        with pytest.raises(LLMServerError, match="HTTP 503"):
            c.chat(MESSAGES)
        assert srv.count == 2


def test_4xx_is_not_retried(scripted_chat_server):
    completion = scripted_chat_server.completion
    with scripted_chat_server(lambda n, b: (400, {"error": {"message": "tools not supported"}}, 0)) as srv:
        c = ChatClient(srv.url, "m", max_retries=3, backoff_s=0.01)
        with pytest.raises(LLMRequestError, match="HTTP 400") as e:
            c.chat(MESSAGES, tools=[{"type": "function", "function": {"name": "f",
                                                                      "parameters": {}}}])
        assert e.value.status_code == 400
        assert srv.count == 1


def test_tool_calls_are_returned_as_name_and_json_arguments(scripted_chat_server):
    completion = scripted_chat_server.completion
    with scripted_chat_server(lambda n, b: (200, completion("", ("submit", '{"a": 1}')), 0)) as srv:
        c = ChatClient(srv.url, "m")
        r = c.chat(MESSAGES, tools=[{"type": "function", "function": {"name": "submit",
                                                                      "parameters": {}}}],
                   tool_choice={"type": "function", "function": {"name": "submit"}})
        assert r.tool_calls == (("submit", '{"a": 1}'),)
        assert r.tool_calls[0].name == "submit" and r.finish_reason == "tool_calls"
        assert srv.bodies[0]["tool_choice"]["function"]["name"] == "submit"


def test_concurrency_limit_is_shared_by_threads(scripted_chat_server):
    completion = scripted_chat_server.completion
    with scripted_chat_server(lambda n, b: (200, completion(), 0.2)) as srv:
        c = ChatClient(srv.url, "m", max_concurrency=2)
        with ThreadPoolExecutor(max_workers=6) as pool:
            results = list(pool.map(lambda _: c.chat(MESSAGES), range(6)))
        assert len(results) == 6 and srv.count == 6
        assert srv.max_in_flight == 2
        assert c.usage.requests == 6 and c.usage.completion_tokens == 18
