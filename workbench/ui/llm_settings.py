"""The app's language-model settings: one OpenAI-compatible endpoint (a local llama.cpp, vLLM or
SGLang server, or a hosted API) used by the LLM forecaster and the LLM generators.

The form holds the base URL, the model name, the *name* of the environment variable that holds
the API key (the key itself never enters the page or the database) and the number of requests in
flight at once. Defaults come from WORKBENCH_LLM_BASE_URL / WORKBENCH_LLM_MODEL. "Check" asks the
server which models it serves and says what it found, or why it could not be reached or answered
with an error (an HTTP status such as 404 or 501 included): as a message, never a traceback. The
question is asked off the server's event loop, so a slow endpoint never holds up the page for
anyone else.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass

import panel as pn

from workbench.llm.client import ENV_API_KEY, ENV_BASE_URL, ENV_MODEL
from workbench.llm.errors import LLMConfigError
from workbench.ui.safe import code, esc

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class LLMSettings:
    """What a search needs to reach the endpoint (no secret: the key stays in the environment)."""

    base_url: str
    model: str
    api_key_env: str = ENV_API_KEY
    concurrency: int = 4

    def check(self) -> None:
        """Raise LLMConfigError, saying what to fix, when a field is missing or malformed."""
        if not self.base_url.startswith(("http://", "https://")):
            raise LLMConfigError(f"LLM base URL {self.base_url!r}: give the server's address starting with "
                                 "http:// or https://, e.g. http://127.0.0.1:8080/v1 (or set "
                                 f"{ENV_BASE_URL} before starting the app)")
        if not self.model:
            raise LLMConfigError(f"no LLM model name: type the name the server serves (\"Check\" lists them), "
                                 f"or set {ENV_MODEL} before starting the app")
        if not _ENV_NAME.match(self.api_key_env):
            raise LLMConfigError(f"API key variable {self.api_key_env!r} is not an environment variable "
                                 f"name; use e.g. {ENV_API_KEY} (the key itself is never typed here)")
        if int(self.concurrency) < 1:
            raise LLMConfigError("LLM concurrency counts requests in flight: at least 1")

    def api_key(self) -> str | None:
        return os.environ.get(self.api_key_env) or None

    def served_models(self, timeout_s: float = 10.0) -> list[str]:
        """The model ids the server lists. Every failure raises an LLMError whose message says
        what to fix: unreachable, or an HTTP error status (e.g. 404: no OpenAI-compatible API at
        that address; 501: the server does not list its models)."""
        from workbench.llm.client import ChatClient
        from workbench.llm.errors import LLMError

        self.check()
        try:
            return ChatClient.list_models(self.base_url, api_key=self.api_key(), timeout_s=timeout_s)
        except LLMError:
            raise
        except Exception as e:  # noqa: BLE001 - the client's HTTP errors become a message
            raise LLMConfigError(http_error_message(self.base_url, e)) from e


def http_error_message(base_url: str, e: Exception) -> str:
    """What to tell the user when GET {base_url}/models failed with `e` (an HTTP status error of
    the OpenAI client, or anything else)."""
    status = getattr(e, "status_code", None)
    where = f"GET {base_url.rstrip('/')}/models"
    if status == 404:
        return (f"{where} answered HTTP 404 (not found): no OpenAI-compatible API at that address. The base "
                "URL usually ends in /v1, e.g. http://127.0.0.1:8080/v1; check the server's address and port")
    if status in (401, 403):
        return (f"{where} answered HTTP {status} (not allowed): the server wants an API key; put it in the "
                "environment variable named under \"API key\" before starting the app")
    if status == 501:
        return (f"{where} answered HTTP 501 (not implemented): the server does not list its models, so the "
                "workbench cannot check that it serves the model; use an OpenAI-compatible server that does "
                "(llama.cpp's, vLLM, SGLang, Ollama's /v1)")
    if status is not None:
        return f"{where} answered HTTP {status}: {str(e)[:300]}; check the server's log"
    return f"{where} failed ({type(e).__name__}: {str(e)[:300]})"


def check_text(s: LLMSettings) -> str:
    """The Check result for `s` as HTML (an error, or what the server serves); never raises."""
    from workbench.errors import WorkbenchError

    try:
        models = s.served_models()
    except WorkbenchError as e:
        return f"<p class='wb-llm-error'><b>LLM endpoint error:</b> {esc(e)}</p>"
    key = "set" if s.api_key() else "not set (fine for a local server)"
    found = ", ".join(code(m) for m in models[:20]) or "none"
    warn = "" if s.model in models else (f" &mdash; <b>{code(s.model or '(no model typed)')} is not one of "
                                         "them</b>")
    return f"<p><b>LLM endpoint reached:</b> serves {found}{warn}; {esc(s.api_key_env)} is {key}.</p>"


class LLMSettingsPanel(pn.viewable.Viewer):
    """The settings form; `settings()` returns what is typed there as LLMSettings."""

    def __init__(self, **params):
        super().__init__(**params)
        self.base_url = pn.widgets.TextInput(name="LLM base URL (OpenAI-compatible)",
                                             value=os.environ.get(ENV_BASE_URL, ""),
                                             placeholder="http://127.0.0.1:8080/v1", css_classes=["wb-llm-url"])
        self.model = pn.widgets.TextInput(name="LLM model", value=os.environ.get(ENV_MODEL, ""),
                                          placeholder="the name the server serves", css_classes=["wb-llm-model"])
        self.key_env = pn.widgets.TextInput(name="API key: environment variable", value=ENV_API_KEY,
                                            css_classes=["wb-llm-key-env"])
        self.concurrency = pn.widgets.IntInput(name="Requests in flight", value=4, css_classes=["wb-llm-conc"])
        self.check_btn = pn.widgets.Button(label="Check", css_classes=["wb-llm-check"])
        self.status = pn.pane.HTML("<p>Used by the <code>llm</code> forecaster and the <code>llm</code> / "
                                   "<code>llm-guided</code> generators.</p>", css_classes=["wb-llm-status"])
        self.check_btn.on_click(self._check)

    def settings(self) -> LLMSettings:
        return LLMSettings(base_url=(self.base_url.value or "").strip().rstrip("/"),
                           model=(self.model.value or "").strip(),
                           api_key_env=(self.key_env.value or "").strip() or ENV_API_KEY,
                           concurrency=int(self.concurrency.value or 0))

    async def _check(self, event=None) -> None:
        """Ask the server (in a worker thread: the event loop serves every session meanwhile)."""
        import asyncio

        s = self.settings()
        self.check_btn.disabled = True
        self.status.object = f"<p>asking {esc(s.base_url or '(no URL)')} for its models...</p>"
        try:
            self.status.object = await asyncio.get_running_loop().run_in_executor(None, check_text, s)
        finally:
            self.check_btn.disabled = False

    def __panel__(self):
        return pn.Card(self.base_url, self.model, self.key_env, self.concurrency, self.check_btn, self.status,
                       title="Language model", collapsed=True, width=330, css_classes=["wb-llm-card"])
