"""The app's language-model settings: checks that name the fix, and endpoint failures shown as a
message (no traceback) when a search cannot reach the server."""
from __future__ import annotations

import asyncio

import pytest

from workbench.llm.errors import LLMConfigError
from workbench.problems import list_problems
from workbench.records import Candidate, Forecast
from workbench.store import Store
from workbench.ui.llm_settings import LLMSettings, LLMSettingsPanel
from workbench.ui.runner import SearchRunner
from workbench.ui.search_view import SearchView, llm_line


def test_settings_checks_name_the_fix():
    with pytest.raises(LLMConfigError, match="http://"):
        LLMSettings("127.0.0.1:8080", "m").check()
    with pytest.raises(LLMConfigError, match="model"):
        LLMSettings("http://127.0.0.1:8080/v1", "").check()
    with pytest.raises(LLMConfigError, match="environment variable"):
        LLMSettings("http://127.0.0.1:8080/v1", "m", api_key_env="sk-abc def").check()
    with pytest.raises(LLMConfigError, match="at least 1"):
        LLMSettings("http://127.0.0.1:8080/v1", "m", concurrency=0).check()
    LLMSettings("http://127.0.0.1:8080/v1", "m").check()


def test_key_is_read_from_the_named_variable(monkeypatch):
    monkeypatch.setenv("MY_LLM_KEY", "secret")
    assert LLMSettings("http://x/v1", "m", api_key_env="MY_LLM_KEY").api_key() == "secret"
    monkeypatch.delenv("MY_LLM_KEY")
    assert LLMSettings("http://x/v1", "m", api_key_env="MY_LLM_KEY").api_key() is None


def test_check_button_reports_an_unreachable_server(free_port):
    panel = LLMSettingsPanel()
    panel.base_url.value, panel.model.value = f"http://127.0.0.1:{free_port}/v1", "m"
    asyncio.run(panel._check())
    assert "cannot reach" in panel.status.object and "Traceback" not in panel.status.object
    assert not panel.check_btn.disabled


@pytest.mark.parametrize("status, said", [(404, "HTTP 404 (not found)"), (501, "HTTP 501 (not implemented)"),
                                          (500, "HTTP 500")])
def test_check_reports_an_http_error_status_as_an_error(status, said):
    """A server answering 404 or 501 to GET /models once left "endpoint reached" on the card."""
    with _StatusServer(status) as url:
        panel = LLMSettingsPanel()
        panel.status.object = "<p><b>LLM endpoint reached:</b> (an earlier check)</p>"
        panel.base_url.value, panel.model.value = url, "m"
        asyncio.run(panel._check())
        assert "LLM endpoint error" in panel.status.object and said in panel.status.object
        assert "endpoint reached" not in panel.status.object and "Traceback" not in panel.status.object
        with pytest.raises(LLMConfigError, match=said.split(" (")[0]):
            LLMSettings(url, "m").served_models()


class _StatusServer:
    """Answers every GET with one HTTP status (and a JSON error body)."""

    def __init__(self, status: int, delay_s: float = 0.0):
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        code, delay = status, delay_s

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):  # noqa: N802
                import time

                time.sleep(delay)
                body = b'{"error": {"message": "no such route"}}'
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __exit__(self, *exc):
        self.server.shutdown()


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "db.sqlite")
    s.put_problems(list_problems())
    return s


def test_llm_choices_need_settings_and_a_reachable_server(store, free_port):
    runner = SearchRunner(store)
    pid = store.problems()[0].id
    with pytest.raises(Exception, match="Language model settings"):
        runner.start(pid, "replay:h100", "screen_topk", "llm", budget=2)
    with pytest.raises(LLMConfigError, match="http://"):
        runner.start(pid, "replay:h100", "screen_topk", "llm", budget=2, llm=LLMSettings("nope", "m"))
    runner.start(pid, "replay:h100", "measure_all", "roofline", budget=2, generator="llm-guided",
                 llm=LLMSettings(f"http://127.0.0.1:{free_port}/v1", "m"))
    runner.join(timeout=60)
    assert runner.phase == "failed" and "cannot reach" in runner.error and "Traceback" not in runner.error
    view = SearchView(store, runner)
    view.refresh(force=True)
    assert "search failed" in view.status.object and "cannot reach" in view.status.object
    assert "Traceback" not in view.status.object


def test_llm_line_sums_model_work_and_shows_the_last_failure():
    a, b = (Candidate.from_source("L1/p", f"x = {i}\n", origin="llm") for i in range(2))
    forecast = Forecast(forecaster="llm", candidate_id=a.id, problem_id="L1/p", hardware_key="h100",
                        probabilities=(1 / 8,) * 8, prompt_tokens=50, completion_tokens=10, seconds=1.5)
    shared = {"prompt_tokens": 100, "completion_tokens": 20, "seconds": 2.0, "shared_by": 2}
    events = [
        {"kind": "generated", "payload": {"candidate": a.to_dict(), "generation": shared}},
        {"kind": "generated", "payload": {"candidate": b.to_dict(), "generation": shared}},
        {"kind": "forecast", "payload": {"forecast": forecast.to_dict()}},
        {"kind": "failed_generation", "payload": {"reason": "chat call failed: <b>down</b>"}},
    ]
    line = llm_line(events)
    assert "2 children written, 1 forecasts, 180 tokens, 3.5 s" in line
    assert "1 failed generations" in line and "&lt;b&gt;down" in line
    assert llm_line([{"kind": "generated", "payload": {"candidate": a.to_dict()}}]) == ""
