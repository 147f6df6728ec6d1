"""Errors of the LLM client. Each message says what to do next."""
from __future__ import annotations

from workbench.errors import ConfigError, WorkbenchError


class LLMError(WorkbenchError):
    """Base class of every error raised by `workbench.llm`."""


class LLMConfigError(LLMError, ConfigError):
    """The client is misconfigured (no base URL, no model, bad limits)."""


class LLMUnreachableError(LLMError):
    """The server could not be reached, or kept timing out, after every retry."""


class LLMServerError(LLMError):
    """The server kept answering with a 5xx status (or 429) after every retry."""


class LLMRequestError(LLMError):
    """The server rejected the request (4xx other than 429): retrying will not help.

    `status_code` is the HTTP status; a server without tool support typically answers 400
    or 422 to a request carrying `tools`.
    """

    def __init__(self, message: str, status_code: int | None = None):
        super().__init__(message)
        self.status_code = status_code
