"""The app's language-model settings: one OpenAI-compatible endpoint (a local llama.cpp, vLLM or
SGLang server, or a hosted API) used by the LLM forecaster and the LLM generators.

The form holds the base URL, the model name, the *name* of the environment variable that holds
the API key (the key itself never enters the page or the database) and the number of requests in
flight at once. Defaults come from WORKBENCH_LLM_BASE_URL / WORKBENCH_LLM_MODEL. "Check" asks the
server which models it serves and says what it found, or why it could not be reached: as a
message, never a traceback.
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
        """The model ids the server lists; raises an LLMError with a message on failure."""
        from workbench.llm.client import ChatClient

        self.check()
        return ChatClient.list_models(self.base_url, api_key=self.api_key(), timeout_s=timeout_s)


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

    def _check(self, event=None) -> None:
        from workbench.errors import WorkbenchError

        s = self.settings()
        try:
            models = s.served_models()
        except WorkbenchError as e:
            self.status.object = f"<p><b>LLM endpoint:</b> {esc(e)}</p>"
            return
        key = "set" if s.api_key() else "not set (fine for a local server)"
        found = ", ".join(code(m) for m in models[:20]) or "none"
        warn = "" if s.model in models else (f" &mdash; <b>{code(s.model or '(no model typed)')} is not one of "
                                             "them</b>")
        self.status.object = (f"<p><b>LLM endpoint reached:</b> serves {found}{warn}; "
                              f"{esc(s.api_key_env)} is {key}.</p>")

    def __panel__(self):
        return pn.Card(self.base_url, self.model, self.key_env, self.concurrency, self.check_btn, self.status,
                       title="Language model", collapsed=True, width=330, css_classes=["wb-llm-card"])
